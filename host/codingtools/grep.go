package codingtools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

const grepDescription = "Search file contents with a regular expression (Go RE2 syntax: no lookaround or backreferences), one line at a time. " +
	"`path` is a file or a directory searched recursively (the working directory by default); .gitignore'd files, the .git directory and binary files are skipped. " +
	"`glob` filters file names (*.go) or paths relative to `path` (src/**/*.ts). " +
	"output_mode: files (default) lists matching files; content shows matching lines as path:line: text; count shows path: N matches per file."

// Grep output modes.
const (
	grepFiles   = "files"
	grepContent = "content"
	grepCount   = "count"
)

// grepLineKeep bounds how much of one line is searched; grepShow bounds how
// much of a matching line is shown; grepKeepBytes bounds the lines content
// mode keeps in all, so that a huge tools.search.max_results still makes a
// result (and a memory footprint) of about a megabyte, its further matches
// counted in the "more results" line.
const (
	grepLineKeep  = 1 << 20
	grepShow      = 400
	grepKeepBytes = 1 << 20
)

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	CaseInsensitive bool   `json:"case_insensitive"`
	OutputMode      string `json:"output_mode"`
}

func (s *Set) grepTool() *tools.Definition {
	return &tools.Definition{
		Name:        "grep",
		Description: grepDescription,
		Parameters: tools.Object(
			tools.Req("pattern", tools.String("The regular expression to search for.")),
			tools.Field("path", tools.String("File or directory to search, absolute or relative to the working directory. Defaults to the working directory.")),
			tools.Field("glob", tools.String("Only search files whose name (or relative path, if the glob has a slash) matches this glob.")),
			tools.Field("case_insensitive", tools.Boolean("Match letters regardless of case. Defaults to false.")),
			tools.Field("output_mode", tools.String("What to return: files (default), content or count.").OneOf(grepFiles, grepContent, grepCount)),
		),
		Output:          tools.StringOutput,
		Effect:          tools.EffectRead,
		Execute:         s.grep,
		Timeout:         ms(s.cfg.Search.TimeoutMs),
		ConcurrencySafe: alwaysConcurrent,
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a grepArgs
			_ = decodeArgs(nameGrep, call, &a)
			return searchView(call, "Search "+a.Pattern, a.Path)
		},
	}
}

// grepHit is one file's matches.
type grepHit struct {
	path  string
	count int
	lines []string // content mode: rendered matching lines, while the result has room
}

func (s *Set) grep(ctx context.Context, call *tools.Call) (any, error) {
	var a grepArgs
	if err := decodeArgs(nameGrep, call, &a); err != nil {
		return nil, err
	}
	mode := a.OutputMode
	if mode == "" {
		mode = grepFiles
	}
	if mode != grepFiles && mode != grepContent && mode != grepCount {
		return nil, failf(nameGrep, CodeInvalidArgs, "output_mode must be files, content or count (got %q)", a.OutputMode)
	}
	if a.Pattern == "" {
		return nil, failf(nameGrep, CodeInvalidArgs, "pattern is empty")
	}
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, failf(nameGrep, CodeInvalidPattern, "invalid regular expression %q: %v", a.Pattern, err)
	}
	filter := filepath.ToSlash(a.Glob)
	if filter != "" && !doublestar.ValidatePattern(filter) {
		return nil, failf(nameGrep, CodeInvalidPattern, "invalid glob %q: check for an unclosed [ or {", a.Glob)
	}
	root, err := searchRoot(nameGrep, call, a.Path)
	if err != nil {
		return nil, err
	}
	fsys := call.Access.FS()
	defer fsys.Close()
	fi, err := fsys.Stat(root)
	if err != nil {
		return nil, openFailure(nameGrep, call, fsys, root, err)
	}

	g := &grepper{fsys: fsys, re: re, mode: mode, wholeMax: grepWholeFileMax, keep: s.cfg.Search.MaxResults, render: func(path string, line int, text string) string {
		return display(call, path) + ":" + strconv.Itoa(line) + ": " + text
	}}
	var hits []grepHit
	search := func(path string) error {
		h, err := g.file(ctx, path)
		if err != nil {
			return err
		}
		if h.count > 0 {
			hits = append(hits, h)
		}
		return nil
	}
	if !fi.IsDir() {
		if err := search(root); err != nil {
			return nil, err
		}
	} else {
		err = walkFiles(ctx, fsys, root, func(path string, d fs.DirEntry) error {
			if filter != "" && !globMatches(filter, root, path) {
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			return search(path)
		})
		if err != nil {
			return nil, err
		}
	}
	skipped := ""
	if g.hardLinked > 0 {
		skipped = fmt.Sprintf("\n(%d hard-linked %s skipped: another name of each may be outside the workspace; grep one by its path to have the user asked)",
			g.hardLinked, plural(g.hardLinked, "file", "files"))
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No matches for %s in %s.", a.Pattern, place(call, root)) + skipped, nil
	}
	return renderGrep(call, hits, mode, s.cfg.Search.MaxResults) + skipped, nil
}

func globMatches(filter, root, path string) bool {
	if !strings.Contains(filter, "/") {
		ok, _ := doublestar.Match(filter, filepath.Base(path))
		return ok
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	ok, _ := doublestar.Match(filter, filepath.ToSlash(rel))
	return ok
}

// grepWholeFileMax is the largest file grep loads at once; bigger files
// are streamed line by line.
const grepWholeFileMax = 16 << 20

// grepper searches files one after another, reusing its buffer so a tree of
// small files does not cost an allocation per file.
type grepper struct {
	fsys   *confine.FS
	re     *regexp.Regexp
	mode   string
	render func(path string, line int, text string) string
	// wholeMax is the largest file loaded at once (grepWholeFileMax).
	wholeMax int64
	// keep is how many more matching lines content mode renders and keeps;
	// past it lines are only counted, so a file of millions of matches
	// costs no more memory than the result shows.
	keep int
	// kept is the bytes of the lines kept so far; at grepKeepBytes keep
	// drops to 0.
	kept int
	buf  []byte
	// hardLinked counts files skipped because another name of them may be
	// outside the workspace.
	hardLinked int
}

// file searches one file. Binary and unreadable files count as no match;
// files mode stops at the first match.
func (g *grepper) file(ctx context.Context, path string) (grepHit, error) {
	h := grepHit{path: path}
	f, err := g.fsys.Open(path)
	if err != nil {
		if errors.Is(err, confine.ErrHardLinked) {
			g.hardLinked++
		}
		return h, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return h, nil
	}
	if fi.Size() > g.wholeMax {
		return g.stream(ctx, f, h)
	}
	if cap(g.buf) < int(fi.Size())+1 {
		g.buf = make([]byte, 0, max(int(fi.Size())+1, 64<<10))
	}
	data := g.buf[:0]
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF || len(data) == cap(data) {
			break
		}
		if err != nil {
			return h, nil
		}
	}
	if looksBinary(data[:min(len(data), sniffLen)]) {
		return h, nil
	}
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if lineNo&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return h, err
			}
		}
		if g.match(&h, lineNo, line) {
			break
		}
	}
	return h, nil
}

// stream searches a large file line by line.
func (g *grepper) stream(ctx context.Context, f *os.File, h grepHit) (grepHit, error) {
	sample := make([]byte, sniffLen)
	n, err := io.ReadFull(f, sample)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return h, nil
	}
	if looksBinary(sample[:n]) {
		return h, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return h, nil
	}
	lr := newLineReader(f, grepLineKeep)
	for lineNo := 1; ; lineNo++ {
		line, _, ok := lr.next()
		if !ok {
			return h, nil
		}
		if lineNo&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return h, err
			}
		}
		if g.match(&h, lineNo, line) {
			return h, nil
		}
	}
}

// match records a matching line; it reports true when the file needs no
// further search.
func (g *grepper) match(h *grepHit, lineNo int, line []byte) (done bool) {
	// Only a line that is shown needs the match position; Match alone
	// allocates nothing, so counting millions of matches makes no garbage.
	if g.mode != grepContent || g.keep <= 0 {
		if !g.re.Match(line) {
			return false
		}
		h.count++
		return g.mode == grepFiles
	}
	loc := g.re.FindIndex(line)
	if loc == nil {
		return false
	}
	h.count++
	g.keep--
	shown := g.render(h.path, lineNo, excerpt(line, loc[0]))
	h.lines = append(h.lines, shown)
	if g.kept += len(shown) + 1; g.kept >= grepKeepBytes {
		g.keep = 0
	}
	return false
}

// excerpt shows a matching line, or for a long line a window around the
// match start, marking what was cut.
func excerpt(line []byte, at int) string {
	if len(line) <= grepShow {
		return string(line)
	}
	start := max(0, at-grepShow/4)
	end := min(len(line), start+grepShow)
	out := trimPartialRune(trimLeadingContinuation(line[start:end]))
	s := string(out)
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}

func renderGrep(call *tools.Call, hits []grepHit, mode string, limit int) string {
	var b strings.Builder
	shown, total := 0, 0
	for _, h := range hits {
		switch mode {
		case grepFiles, grepCount:
			total++
			if shown == limit {
				continue
			}
			shown++
			b.WriteString(display(call, h.path))
			if mode == grepCount {
				fmt.Fprintf(&b, ": %d", h.count)
			}
			b.WriteByte('\n')
		case grepContent:
			// Lines past the limit were counted, not kept.
			total += h.count
			for _, l := range h.lines[:min(len(h.lines), limit-shown)] {
				shown++
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	writeMore(&b, total-shown)
	return strings.TrimSuffix(b.String(), "\n")
}
