package store

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestWorkspaceSessionsListsSessionDirectoriesWithoutTheirLogs(t *testing.T) {
	f := newFixture(t, Options{})
	for _, id := range []string{"a", "b"} {
		if err := mustCreate(t, f.s, testHeader(id)).Close(); err != nil {
			t.Fatal(err)
		}
	}
	slug := WorkspaceSlug(testHeader("a").Cwd)
	dir := filepath.Join(f.root, slug)
	// b's log is gone but its directory stays; c is a directory a Create
	// (or a copy) has made and not yet written a log into. Both are
	// listed: the caller looks their ids up, which finds no log.
	if err := os.Remove(filepath.Join(dir, "b", logName)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"c", ".hidden"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ids, err := f.s.WorkspaceSessions(slug)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("WorkspaceSessions = %v, want %v", ids, want)
	}
	if ids, err := f.s.WorkspaceSessions("absent"); err != nil || len(ids) != 0 {
		t.Errorf("a missing directory: %v, %v; want none and no error", ids, err)
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := f.s.WorkspaceSessions(bad); err == nil {
			t.Errorf("WorkspaceSessions(%q) did not fail", bad)
		}
	}
}
