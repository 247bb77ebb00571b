// Command gentables writes host/searchtext's tables.go: how the FTS5
// tokenizer "unicode61 remove_diacritics 2" of the modernc.org/sqlite this
// module requires treats every Unicode scalar value, learnt by asking that
// SQLite, so that searchtext.Tokens splits and folds text exactly as the
// session-search index does. It is a development tool: run it through
// "go generate ./host/searchtext" after changing the SQLite version, and
// commit the result. The package's parity tests fail when the tables and
// SQLite disagree.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/seed-e9b4dba4/dsh/internal/ftsoracle"
)

func main() {
	out := flag.String("o", "tables.go", "the Go file to write")
	flag.Parse()
	if err := run(context.Background(), *out); err != nil {
		fmt.Fprintln(os.Stderr, "gentables:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string) error {
	x, err := ftsoracle.Open(ctx, tokenizer)
	if err != nil {
		return err
	}
	defer x.Close()
	cps, err := derive(ctx, x)
	if err != nil {
		return err
	}
	if err := checkModel(cps); err != nil {
		return err
	}
	version, err := x.SQLiteVersion(ctx)
	if err != nil {
		return err
	}
	src, err := render(cps, fmt.Sprintf("SQLite %s as %s builds it", version, sqliteModule()))
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, src) {
		return nil
	}
	return os.WriteFile(out, src, 0o644)
}

// sqliteModule names the modernc.org/sqlite this program was built with.
func sqliteModule() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/sqlite" {
				return d.Path + " " + d.Version
			}
		}
	}
	return "modernc.org/sqlite"
}
