package searchindex

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Two dsh processes started together on a fresh home (an editor agent and
// a terminal UI) open one new index at the same moment: neither may fail.
// Switching a new file into WAL needs an exclusive lock, which SQLite
// refuses at once (SQLITE_BUSY, no busy handler) while the other opener
// reads the file.
func TestConcurrentFirstOpensOfOneNewIndexAllSucceed(t *testing.T) {
	dir := t.TempDir()
	for round := range 30 {
		cfg := DefaultConfig(filepath.Join(dir, fmt.Sprintf("round-%02d.db", round)))
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := openDatabase(context.Background(), cfg)
				if err == nil {
					err = d.close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, opener %d: %v", round, i, err)
			}
		}
	}
}
