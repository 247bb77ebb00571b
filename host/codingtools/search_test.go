package codingtools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/confine"
)

// repo builds a small git-like tree:
//
//	.git/HEAD                 (never listed)
//	.gitignore                *.log, build/, /top-only.go
//	a.go, b.log, top-only.go
//	build/x.go                (ignored directory)
//	sub/.gitignore            secret.go, !keep.log
//	sub/c.go, sub/secret.go, sub/keep.log, sub/top-only.go
//	other/secret.go           (the nested rule does not reach here)
func repo(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	files := map[string]string{
		".git/HEAD":        "ref: refs/heads/main\n",
		".git/x.go":        "package git\n",
		".gitignore":       "# comment\n*.log\nbuild/\n/top-only.go\n",
		"a.go":             "package a\n\nfunc Hello() string { return \"hello\" }\n",
		"b.log":            "hello log\n",
		"top-only.go":      "package top\n",
		"build/x.go":       "package build // hello\n",
		"sub/.gitignore":   "secret.go\n!keep.log\n",
		"sub/c.go":         "package sub\n\n// HELLO again\nvar hello = 1\n",
		"sub/secret.go":    "package sub // hello\n",
		"sub/keep.log":     "hello kept\n",
		"sub/top-only.go":  "package sub\n",
		"other/secret.go":  "package other\n",
		"other/binary.bin": "hello\x00\x01\x02",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(ws, name), content)
	}
	return ws
}

// touch sets a file's modification time to base+offset seconds.
func touch(t *testing.T, path string, offset int) {
	t.Helper()
	at := time.Unix(1_700_000_000+int64(offset), 0)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func TestGlobHonoursNestedGitignoreAndSkipsGit(t *testing.T) {
	ws := repo(t)
	for i, f := range []string{"a.go", "sub/c.go", "sub/keep.log", "sub/top-only.go", "other/secret.go"} {
		touch(t, filepath.Join(ws, f), i)
	}
	s := testSet(t, nil)
	got := s.mustExec(t, mkCall(t, "glob", nil, ws, map[string]any{"pattern": "**/*.{go,log}"}))
	want := strings.Join([]string{"other/secret.go", "sub/top-only.go", "sub/keep.log", "sub/c.go", "a.go"}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant (newest first)\n%s", got, want)
	}
}

func TestGlobFromASubdirectoryAppliesParentIgnores(t *testing.T) {
	ws := repo(t)
	writeFile(t, filepath.Join(ws, "sub/deep/trace.log"), "x")
	s := testSet(t, nil)
	got := s.mustExec(t, mkCall(t, "glob", nil, ws, map[string]any{"pattern": "**/*.log", "path": "sub"}))
	if got != "sub/keep.log" {
		t.Errorf("got %q, want only the re-included sub/keep.log", got)
	}
	// Asking for an ignored directory explicitly searches it.
	got = s.mustExec(t, mkCall(t, "glob", nil, ws, map[string]any{"pattern": "*.go", "path": "build"}))
	if got != "build/x.go" {
		t.Errorf("explicit ignored dir: got %q", got)
	}
}

func TestGlobLimitsResultsWithAMoreLine(t *testing.T) {
	ws := workspace(t)
	for i, n := range []string{"1", "2", "3", "4", "5"} {
		writeFile(t, filepath.Join(ws, n+".txt"), n)
		touch(t, filepath.Join(ws, n+".txt"), i)
	}
	s := testSet(t, func(c *Config) { c.Search.MaxResults = 2 })
	got := s.mustExec(t, mkCall(t, "glob", nil, ws, map[string]any{"pattern": "*.txt"}))
	want := "5.txt\n4.txt\n(3 more results not shown; narrow the pattern)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestGlobOtherCases(t *testing.T) {
	ws := repo(t)
	s := testSet(t, nil)
	got := s.mustExec(t, mkCall(t, "glob", nil, "", map[string]any{"pattern": filepath.Join(ws, "sub", "*.go")}))
	if got != filepath.Join(ws, "sub/c.go")+"\n"+filepath.Join(ws, "sub/top-only.go") &&
		got != filepath.Join(ws, "sub/top-only.go")+"\n"+filepath.Join(ws, "sub/c.go") {
		t.Errorf("absolute pattern: got %q", got)
	}
	if got := s.mustExec(t, mkCall(t, "glob", nil, ws, map[string]any{"pattern": "**/*.rs"})); got != "No files match **/*.rs in the working directory." {
		t.Errorf("no match: %q", got)
	}
	_, err := s.exec(t, context.Background(), mkCall(t, "glob", nil, ws, map[string]any{"pattern": "src/[abc"}))
	wantCode(t, err, CodeInvalidPattern, `invalid glob pattern "src/[abc"`)
	_, err = s.exec(t, context.Background(), mkCall(t, "glob", nil, ws, map[string]any{"pattern": "*", "path": "a.go"}))
	wantCode(t, err, CodeInvalidArgs, "a.go is a file")
	_, err = s.exec(t, context.Background(), mkCall(t, "glob", nil, ws, map[string]any{"pattern": "*", "path": "missing"}))
	wantCode(t, err, CodeNotFound)
}

func TestGrepOutputModes(t *testing.T) {
	ws := repo(t)
	s := testSet(t, nil)
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"files is the default", map[string]any{"pattern": "hello"},
			"a.go\nsub/c.go\nsub/keep.log"},
		{"content", map[string]any{"pattern": "hello", "output_mode": "content"},
			"a.go:3: func Hello() string { return \"hello\" }\nsub/c.go:4: var hello = 1\nsub/keep.log:1: hello kept"},
		{"count", map[string]any{"pattern": "(?i)hello", "output_mode": "count"},
			"a.go: 1\nsub/c.go: 2\nsub/keep.log: 1"},
		{"case insensitive", map[string]any{"pattern": "HELLO", "case_insensitive": true, "output_mode": "count"},
			"a.go: 1\nsub/c.go: 2\nsub/keep.log: 1"},
		{"glob on names", map[string]any{"pattern": "hello", "glob": "*.go"},
			"a.go\nsub/c.go"},
		{"glob on paths", map[string]any{"pattern": "package", "glob": "sub/**"},
			"sub/c.go\nsub/top-only.go"},
		{"a single file", map[string]any{"pattern": "^var", "path": "sub/c.go", "output_mode": "content"},
			"sub/c.go:4: var hello = 1"},
		{"no match", map[string]any{"pattern": "nothing-like-this"},
			"No matches for nothing-like-this in the working directory."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.mustExec(t, mkCall(t, "grep", nil, ws, tc.args)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGrepLimitsResultsWithAMoreLine(t *testing.T) {
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "m.txt"), strings.Repeat("match\n", 5))
	s := testSet(t, func(c *Config) { c.Search.MaxResults = 3 })
	got := s.mustExec(t, mkCall(t, "grep", nil, ws, map[string]any{"pattern": "match", "output_mode": "content"}))
	want := "m.txt:1: match\nm.txt:2: match\nm.txt:3: match\n(2 more results not shown; narrow the pattern)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestGrepCountsButStopsKeepingLinesAtTheLimit(t *testing.T) {
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "a.txt"), strings.Repeat("match\n", 4))
	writeFile(t, filepath.Join(ws, "b.txt"), strings.Repeat("match\n", 50000))
	s := testSet(t, func(c *Config) { c.Search.MaxResults = 3 })
	got := s.mustExec(t, mkCall(t, "grep", nil, ws, map[string]any{"pattern": "match", "output_mode": "content"}))
	want := "a.txt:1: match\na.txt:2: match\na.txt:3: match\n(50001 more results not shown; narrow the pattern)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A streamed file holds only the kept lines, however many match.
	for _, whole := range []int64{grepWholeFileMax, 4} {
		g := &grepper{fsys: confine.Unrestricted().FS(), re: regexp.MustCompile("match"), mode: grepContent, wholeMax: whole, keep: 2,
			render: func(_ string, line int, text string) string { return fmt.Sprintf("%d: %s", line, text) }}
		h, err := g.file(context.Background(), filepath.Join(ws, "b.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if h.count != 50000 || strings.Join(h.lines, "|") != "1: match|2: match" || g.keep != 0 {
			t.Errorf("wholeMax %d: count %d, lines %q, keep %d", whole, h.count, h.lines, g.keep)
		}
	}
}

func TestGrepKeepsAboutAMegabyteOfLinesWhateverMaxResults(t *testing.T) {
	ws := workspace(t)
	line := strings.Repeat("m", 300) + " match"
	writeFile(t, filepath.Join(ws, "big.txt"), strings.Repeat(line+"\n", 20000))
	s := testSet(t, func(c *Config) { c.Search.MaxResults = 1000000 })
	got := s.mustExec(t, mkCall(t, "grep", nil, ws, map[string]any{"pattern": "match", "output_mode": "content"}))
	if len(got) > grepKeepBytes+len(line)+200 {
		t.Errorf("result holds %d bytes, want about %d", len(got), grepKeepBytes)
	}
	shown := strings.Count(got, " match\n")
	if want := fmt.Sprintf("(%d more results not shown; narrow the pattern)", 20000-shown); !strings.HasSuffix(got, want) {
		t.Errorf("result ends %q, want %q", got[len(got)-80:], want)
	}
}

func TestGrepShowsAWindowOfLongLines(t *testing.T) {
	ws := workspace(t)
	line := strings.Repeat("a", 1000) + "NEEDLE" + strings.Repeat("b", 1000)
	writeFile(t, filepath.Join(ws, "min.js"), line+"\n")
	got := testSet(t, nil).mustExec(t, mkCall(t, "grep", nil, ws, map[string]any{"pattern": "NEEDLE", "output_mode": "content"}))
	want := "min.js:1: …" + strings.Repeat("a", 100) + "NEEDLE" + strings.Repeat("b", 294) + "…"
	if got != want {
		t.Errorf("got %q", got)
	}
}

func TestGrepErrors(t *testing.T) {
	ws := repo(t)
	s := testSet(t, nil)
	_, err := s.exec(t, context.Background(), mkCall(t, "grep", nil, ws, map[string]any{"pattern": "func (a"}))
	wantCode(t, err, CodeInvalidPattern, `invalid regular expression "func (a"`, "missing closing )")
	_, err = s.exec(t, context.Background(), mkCall(t, "grep", nil, ws, map[string]any{"pattern": "x", "output_mode": "lines"}))
	wantCode(t, err, CodeInvalidArgs, "output_mode must be files, content or count")
	_, err = s.exec(t, context.Background(), mkCall(t, "grep", nil, ws, map[string]any{"pattern": "x", "glob": "{a"}))
	wantCode(t, err, CodeInvalidPattern)
	_, err = s.exec(t, context.Background(), mkCall(t, "grep", nil, ws, map[string]any{"pattern": "x", "path": "nope"}))
	wantCode(t, err, CodeNotFound)
}

func TestSearchToolsAreConcurrencySafeAndDeclareABudget(t *testing.T) {
	s := testSet(t, func(c *Config) { c.Search.TimeoutMs = 1234 })
	for _, name := range []string{"glob", "grep"} {
		d := s.def(t, name)
		if d.ConcurrencySafe == nil || !d.ConcurrencySafe(mkCall(t, name, nil, "/w", map[string]any{"pattern": "x"})) {
			t.Errorf("%s must be concurrency-safe", name)
		}
		if d.Timeout != 1234*time.Millisecond {
			t.Errorf("%s timeout = %v", name, d.Timeout)
		}
	}
}

func TestSearchStopsWhenCancelled(t *testing.T) {
	ws := repo(t)
	s := testSet(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, pattern := range map[string]string{"glob": "**", "grep": "x"} {
		_, err := s.exec(t, ctx, mkCall(t, name, nil, ws, map[string]any{"pattern": pattern}))
		if err != context.Canceled {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
	}
}

func TestGrepStreamsLargeFilesWithTheSameResults(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "big.txt")
	writeFile(t, path, "alpha\r\nbeta NEEDLE\nNEEDLE gamma\nend")
	bin := filepath.Join(ws, "big.bin")
	writeFile(t, bin, "NEEDLE\x00")
	for _, whole := range []int64{grepWholeFileMax, 4} {
		for _, mode := range []string{grepContent, grepCount, grepFiles} {
			g := &grepper{fsys: confine.Unrestricted().FS(), re: regexp.MustCompile("NEEDLE"), mode: mode, wholeMax: whole, keep: 100,
				render: func(_ string, line int, text string) string { return fmt.Sprintf("%d: %s", line, text) }}
			h, err := g.file(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]grepHit{
				grepContent: {path: path, count: 2, lines: []string{"2: beta NEEDLE", "3: NEEDLE gamma"}},
				grepCount:   {path: path, count: 2},
				grepFiles:   {path: path, count: 1},
			}[mode]
			if h.count != want.count || strings.Join(h.lines, "|") != strings.Join(want.lines, "|") {
				t.Errorf("wholeMax %d, mode %s: got %+v, want %+v", whole, mode, h, want)
			}
			if hb, _ := g.file(context.Background(), bin); hb.count != 0 {
				t.Errorf("wholeMax %d: binary file matched", whole)
			}
		}
	}
}
