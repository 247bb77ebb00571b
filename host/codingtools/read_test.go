package codingtools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d: line %d\n", i, i)
	}
	return b.String()
}

func TestReadWindows(t *testing.T) {
	ws := workspace(t)
	var content strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&content, "line %d\n", i)
	}
	writeFile(t, filepath.Join(ws, "ten.txt"), content.String())
	s := testSet(t, func(c *Config) { c.Read.DefaultLimit = 4 })

	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"default limit from config", map[string]any{},
			numbered(1, 4) + "\n(Showing lines 1-4 of 10. Use offset 5 to continue.)"},
		{"offset and limit", map[string]any{"offset": 3, "limit": 2},
			numbered(3, 4) + "\n(Showing lines 3-4 of 10. Use offset 5 to continue.)"},
		{"window reaching the end", map[string]any{"offset": 8, "limit": 5},
			numbered(8, 10) + "\n(End of file - total 10 lines)"},
		{"last line exactly", map[string]any{"offset": 10, "limit": 1},
			numbered(10, 10) + "\n(End of file - total 10 lines)"},
		{"offset zero reads from the start", map[string]any{"offset": 0, "limit": 1},
			numbered(1, 1) + "\n(Showing lines 1-1 of 10. Use offset 2 to continue.)"},
		{"integral float offset", map[string]any{"offset": 2.0, "limit": 1},
			numbered(2, 2) + "\n(Showing lines 2-2 of 10. Use offset 3 to continue.)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"file_path": "ten.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			got := s.mustExec(t, mkCall(t, "read", nil, ws, args))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestReadWholeFileEndsWithTotal(t *testing.T) {
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "a.go"), "package a\r\n\r\nfunc A() {}")
	got := testSet(t, nil).mustExec(t, mkCall(t, "read", nil, ws, map[string]any{"file_path": filepath.Join(ws, "a.go")}))
	want := "1: package a\n2: \n3: func A() {}\n\n(End of file - total 3 lines)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadEmptyFile(t *testing.T) {
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "empty"), "")
	s := testSet(t, nil)
	if got := s.mustExec(t, mkCall(t, "read", nil, ws, map[string]any{"file_path": "empty"})); got != "(Empty file - 0 lines)" {
		t.Errorf("got %q", got)
	}
	_, err := s.exec(t, context.Background(), mkCall(t, "read", nil, ws, map[string]any{"file_path": "empty", "offset": 2}))
	wantCode(t, err, CodeOffsetOutOfRange)
}

func TestReadErrors(t *testing.T) {
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "three.txt"), "a\nb\nc\n")
	writeFile(t, filepath.Join(ws, "config.yaml"), "k: v\n")
	writeFile(t, filepath.Join(ws, "img.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := testSet(t, nil)
	cases := []struct {
		name      string
		cwd       string
		args      map[string]any
		code      string
		fragments []string
	}{
		{"offset past the end", ws, map[string]any{"file_path": "three.txt", "offset": 9}, CodeOffsetOutOfRange,
			[]string{"offset 9", "has 3 lines", "from 1 to 3"}},
		{"directory suggests glob", ws, map[string]any{"file_path": "dir"}, CodeIsDirectory,
			[]string{"dir is a directory", "glob"}},
		{"binary file", ws, map[string]any{"file_path": "img.png"}, CodeBinary,
			[]string{"img.png is a binary file", "bash"}},
		{"missing file suggests a close name", ws, map[string]any{"file_path": "config.yml"}, CodeNotFound,
			[]string{"file not found: config.yml", "Did you mean config.yaml?"}},
		{"missing file in a missing directory", ws, map[string]any{"file_path": "nope/x.go"}, CodeNotFound,
			[]string{"nope does not exist"}},
		{"relative path without a workspace", "", map[string]any{"file_path": "three.txt"}, CodeNoWorkspace,
			[]string{"absolute path"}},
		{"negative offset", ws, map[string]any{"file_path": "three.txt", "offset": -1}, CodeInvalidArgs,
			[]string{"offset must be 1 or more"}},
		{"zero limit", ws, map[string]any{"file_path": "three.txt", "limit": 0}, CodeInvalidArgs,
			[]string{"limit must be 1 or more"}},
		{"fractional offset", ws, map[string]any{"file_path": "three.txt", "offset": 1.5}, CodeInvalidArgs,
			[]string{"expected an integer"}},
		{"empty path", ws, map[string]any{"file_path": " "}, CodeInvalidArgs,
			[]string{"file_path is empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.exec(t, context.Background(), mkCall(t, "read", nil, tc.cwd, tc.args))
			wantCode(t, err, tc.code, tc.fragments...)
		})
	}
}

func TestReadCutsLongLinesOnARuneBoundary(t *testing.T) {
	ws := workspace(t)
	long := "x" + strings.Repeat("é", 100) // 201 bytes; a cut at 20 splits an é
	writeFile(t, filepath.Join(ws, "long.txt"), "short\n"+long+"\nend\n")
	s := testSet(t, func(c *Config) { c.Read.MaxLineBytes = 20 })
	got := s.mustExec(t, mkCall(t, "read", nil, ws, map[string]any{"file_path": "long.txt"}))
	want := "1: short\n2: x" + strings.Repeat("é", 9) + " …[line cut: 182 more bytes]\n3: end\n\n(End of file - total 3 lines)"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if !utf8.ValidString(got) {
		t.Error("output is not valid UTF-8")
	}
}

func TestReadStopsAtTheOutputBudgetAndSaysWhereToContinue(t *testing.T) {
	ws := workspace(t)
	line := strings.Repeat("a", 500)
	writeFile(t, filepath.Join(ws, "wide.txt"), strings.Repeat(line+"\n", 10))
	s := testSet(t, func(c *Config) { c.Read.MaxOutputBytes = 1200 })
	got := s.mustExec(t, mkCall(t, "read", nil, ws, map[string]any{"file_path": "wide.txt"}))
	want := "1: " + line + "\n2: " + line + "\n\n(Showing lines 1-2 of 10; output limit of 1200 bytes reached. Use offset 3 to continue.)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReadPresentsTheFileAsLocation(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	d := s.def(t, "read")
	v := d.PresentCall(mkCall(t, "read", nil, ws, map[string]any{"file_path": "src/a.go", "offset": 40}))
	if v.Kind != "read" || v.Title != "Read src/a.go (from line 40)" {
		t.Errorf("view = %+v", v)
	}
	if len(v.Locations) != 1 || v.Locations[0].Path != filepath.Join(ws, "src/a.go") || v.Locations[0].Line != 40 {
		t.Errorf("locations = %+v", v.Locations)
	}
	if !d.ConcurrencySafe(mkCall(t, "read", nil, ws, map[string]any{"file_path": "x"})) {
		t.Error("read must be concurrency-safe")
	}
}
