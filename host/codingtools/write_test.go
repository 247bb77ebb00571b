package codingtools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCreatesFilesAndParents(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	got := s.mustExec(t, mkCall(t, "write", live, ws, map[string]any{"file_path": "deep/er/new.txt", "content": "one\ntwo\n"}))
	if got != "Created deep/er/new.txt (2 lines, 8 bytes)." {
		t.Errorf("result = %q", got)
	}
	if c := readFile(t, filepath.Join(ws, "deep/er/new.txt")); c != "one\ntwo\n" {
		t.Errorf("content = %q", c)
	}
	// Writing counts as having seen the file: overwrite and edit need no read.
	s.mustExec(t, mkCall(t, "write", live, ws, map[string]any{"file_path": "deep/er/new.txt", "content": "three\n"}))
	s.mustExec(t, mkCall(t, "edit", live, ws, map[string]any{"file_path": "deep/er/new.txt", "old_string": "three", "new_string": "four"}))
	if c := readFile(t, filepath.Join(ws, "deep/er/new.txt")); c != "four\n" {
		t.Errorf("content = %q", c)
	}
}

func TestWriteOverwriteRequiresAFreshRead(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "run.sh")
	writeFile(t, path, "echo old\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	write := mkCall(t, "write", live, ws, map[string]any{"file_path": "run.sh", "content": "echo new\n"})

	_, err := s.exec(t, context.Background(), write)
	wantCode(t, err, CodeNotRead, "run.sh has not been read", "overwriting")

	s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": "run.sh"}))
	writeFile(t, path, "echo changed meanwhile\n")
	_, err = s.exec(t, context.Background(), write)
	wantCode(t, err, CodeChangedOnDisk)

	s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": "run.sh"}))
	if got := s.mustExec(t, write); got != "Wrote run.sh (1 line, 9 bytes)." {
		t.Errorf("result = %q", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want the original 0755 kept", fi.Mode().Perm())
	}
}

func TestWriteRefusesADirectory(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	_, err := s.exec(t, context.Background(), mkCall(t, "write", nil, ws, map[string]any{"file_path": ws, "content": "x"}))
	wantCode(t, err, CodeIsDirectory)
	_, err = s.exec(t, context.Background(), mkCall(t, "write", nil, ws, map[string]any{"file_path": "x"}))
	wantCode(t, err, CodeInvalidArgs, "content is required")
}

func TestWritePresentsADiff(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	d := s.def(t, "write")
	v := d.PresentCall(mkCall(t, "write", nil, ws, map[string]any{"file_path": "n.txt", "content": "new"}))
	if v.Kind != "edit" || v.Diff == nil || v.Diff.OldText != nil || v.Diff.NewText != "new" || v.Diff.Path != filepath.Join(ws, "n.txt") {
		t.Errorf("new file view = %+v diff %+v", v, v.Diff)
	}
	writeFile(t, filepath.Join(ws, "n.txt"), "old")
	v = d.PresentCall(mkCall(t, "write", nil, ws, map[string]any{"file_path": "n.txt", "content": "new"}))
	if v.Diff == nil || v.Diff.OldText == nil || *v.Diff.OldText != "old" {
		t.Errorf("existing file diff = %+v", v.Diff)
	}
}

func TestWriteRefusesContentOverTheLimit(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, func(c *Config) { c.MaxFileBytes = 100 })
	live := newLive(t, "s1", ws)
	_, err := s.exec(t, context.Background(), mkCall(t, "write", live, ws, map[string]any{"file_path": "big.txt", "content": strings.Repeat("x", 101)}))
	wantCode(t, err, CodeTooLarge, "content for big.txt is 101 bytes, over write's limit of 100 bytes (tools.max_file_bytes)")
	if _, err := os.Lstat(filepath.Join(ws, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused write created the file: %v", err)
	}
	s.mustExec(t, mkCall(t, "write", live, ws, map[string]any{"file_path": "big.txt", "content": strings.Repeat("x", 100)}))
}
