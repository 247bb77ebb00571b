package codingtools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEditRequiresAReadFirst(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "a.go")
	writeFile(t, path, "package a\n")
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	edit := mkCall(t, "edit", live, ws, map[string]any{"file_path": "a.go", "old_string": "package a", "new_string": "package b"})

	_, err := s.exec(t, context.Background(), edit)
	wantCode(t, err, CodeNotRead, "a.go has not been read in this session", "read it with the read tool")
	if got := readFile(t, path); got != "package a\n" {
		t.Fatalf("file changed after a refused edit: %q", got)
	}

	// A read by another session does not count.
	s.mustExec(t, mkCall(t, "read", newLive(t, "other", ws), ws, map[string]any{"file_path": "a.go"}))
	_, err = s.exec(t, context.Background(), edit)
	wantCode(t, err, CodeNotRead)

	s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": "a.go"}))
	if got := s.mustExec(t, edit); got != "Edited a.go: replaced 1 occurrence (line 1)." {
		t.Errorf("result = %q", got)
	}
	if got := readFile(t, path); got != "package b\n" {
		t.Errorf("file = %q", got)
	}
	// The edit refreshed the record: a second edit needs no new read.
	s.mustExec(t, mkCall(t, "edit", live, ws, map[string]any{"file_path": "a.go", "old_string": "b", "new_string": "c"}))
	if got := readFile(t, path); got != "package c\n" {
		t.Errorf("file = %q", got)
	}
}

func TestEditRefusesAFileChangedOnDisk(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"size changed", func(t *testing.T, path string) { writeFile(t, path, "package a // changed\n") }},
		{"same size, new mtime", func(t *testing.T, path string) {
			writeFile(t, path, "package z\n")
			if err := os.Chtimes(path, time.Unix(1, 0), time.Unix(1, 0)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace(t)
			path := filepath.Join(ws, "a.go")
			writeFile(t, path, "package a\n")
			s := testSet(t, nil)
			live := newLive(t, "s1", ws)
			s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": path}))
			tc.change(t, path)
			_, err := s.exec(t, context.Background(), mkCall(t, "edit", live, ws, map[string]any{"file_path": path, "old_string": "package", "new_string": "pkg"}))
			wantCode(t, err, CodeChangedOnDisk, "changed on disk", "read it again")
		})
	}
}

func TestEditFailures(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "m.go")
	content := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	writeFile(t, path, content)
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": "m.go"}))

	cases := []struct {
		name      string
		old, new  string
		code      string
		fragments []string
	}{
		{"not unique", "return 1", "return 2", CodeNotUnique,
			[]string{"matches 2 times in m.go (lines 2, 6)", "more surrounding lines", "replace_all"}},
		{"not found", "return 3", "return 4", CodeNoMatch,
			[]string{"old_string was not found in m.go", "whitespace and indentation"}},
		{"whitespace differs", "func b() {\n    return 1\n}", "x", CodeNoMatch,
			[]string{"differs only in whitespace or indentation starts at line 5"}},
		{"line-number prefixes copied", "2: \treturn 1", "x", CodeNoMatch,
			[]string{"line-number prefixes"}},
		{"identical strings", "return 1", "return 1", CodeNoChange,
			[]string{"identical"}},
		{"empty old_string", "", "x", CodeInvalidArgs,
			[]string{"old_string is empty", "write"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.exec(t, context.Background(), mkCall(t, "edit", live, ws, map[string]any{"file_path": "m.go", "old_string": tc.old, "new_string": tc.new}))
			wantCode(t, err, tc.code, tc.fragments...)
			if got := readFile(t, path); got != content {
				t.Errorf("file changed after a failed edit: %q", got)
			}
		})
	}
	_, err := s.exec(t, context.Background(), mkCall(t, "edit", live, ws, map[string]any{"file_path": "nothere.go", "old_string": "a", "new_string": "b"}))
	wantCode(t, err, CodeNotFound)
}

func TestEditReplaceAll(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "m.txt")
	writeFile(t, path, "a x\nb x\nc x\n")
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": "m.txt"}))
	got := s.mustExec(t, mkCall(t, "edit", live, ws, map[string]any{"file_path": "m.txt", "old_string": "x", "new_string": "y", "replace_all": true}))
	if got != "Edited m.txt: replaced 3 occurrences (lines 1, 2, 3)." {
		t.Errorf("result = %q", got)
	}
	if got := readFile(t, path); got != "a y\nb y\nc y\n" {
		t.Errorf("file = %q", got)
	}
}

func TestEditMatchesLFTextInACRLFFile(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "w.txt")
	writeFile(t, path, "one\r\ntwo\r\nthree\r\n")
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": "w.txt"}))
	s.mustExec(t, mkCall(t, "edit", live, ws, map[string]any{"file_path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}))
	if got := readFile(t, path); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("file = %q", got)
	}
}

func TestEditPresentsADiff(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "d.txt")
	writeFile(t, path, "alpha\nbeta\n")
	s := testSet(t, nil)
	v := s.def(t, "edit").PresentCall(mkCall(t, "edit", nil, ws, map[string]any{"file_path": "d.txt", "old_string": "beta", "new_string": "gamma"}))
	if v.Kind != "edit" || v.Title != "Edit d.txt" || v.Diff == nil {
		t.Fatalf("view = %+v", v)
	}
	if v.Diff.Path != path || v.Diff.OldText == nil || *v.Diff.OldText != "alpha\nbeta\n" || v.Diff.NewText != "alpha\ngamma\n" {
		t.Errorf("diff = %+v", v.Diff)
	}
	if len(v.Locations) != 1 || v.Locations[0].Line != 2 {
		t.Errorf("locations = %+v", v.Locations)
	}
}

func TestEditRefusesFilesAndResultsOverTheLimit(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, func(c *Config) { c.MaxFileBytes = 100 })
	live := newLive(t, "s1", ws)
	big := filepath.Join(ws, "big.txt")
	writeFile(t, big, strings.Repeat("x", 101))
	small := filepath.Join(ws, "small.txt")
	writeFile(t, small, "a a a\n")
	for _, name := range []string{"big.txt", "small.txt"} {
		s.mustExec(t, mkCall(t, "read", live, ws, map[string]any{"file_path": name}))
	}

	_, err := s.exec(t, context.Background(), mkCall(t, "edit", live, ws, map[string]any{"file_path": "big.txt", "old_string": "x", "new_string": "y", "replace_all": true}))
	wantCode(t, err, CodeTooLarge, "big.txt is larger than edit's limit of 100 bytes (tools.max_file_bytes)", "through bash")

	// replace_all multiplies: 3 × 40 more bytes is over the limit.
	_, err = s.exec(t, context.Background(), mkCall(t, "edit", live, ws, map[string]any{"file_path": "small.txt", "old_string": "a", "new_string": strings.Repeat("b", 41), "replace_all": true}))
	wantCode(t, err, CodeTooLarge, "the edit would make small.txt 126 bytes, over edit's limit of 100 bytes")
	for path, want := range map[string]string{big: strings.Repeat("x", 101), small: "a a a\n"} {
		if got := readFile(t, path); got != want {
			t.Errorf("%s changed by a refused edit: %q", path, got)
		}
	}
	// Up to the limit is fine.
	s.mustExec(t, mkCall(t, "edit", live, ws, map[string]any{"file_path": "small.txt", "old_string": "a", "new_string": strings.Repeat("b", 30), "replace_all": true}))
	if got := readFile(t, small); len(got) != 93 {
		t.Errorf("edit within the limit: %d bytes", len(got))
	}
}
