package codingtools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

const globDescription = "Find files by name with a glob pattern: * and ? match within one path segment, ** matches any number of directories, {a,b} matches alternatives, [abc] a character class. " +
	"The pattern is matched against paths relative to `path` (the working directory by default), so use **/*.go to search recursively. " +
	"Files excluded by .gitignore and the .git directory are skipped. Results are sorted by modification time, newest first."

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (s *Set) globTool() *tools.Definition {
	return &tools.Definition{
		Name:        "glob",
		Description: globDescription,
		Parameters: tools.Object(
			tools.Req("pattern", tools.String("The glob pattern, for example **/*.go or src/**/*_test.go.")),
			tools.Field("path", tools.String("Directory to search in, absolute or relative to the working directory. Defaults to the working directory.")),
		),
		Output:          tools.StringOutput,
		Effect:          tools.EffectRead,
		Execute:         s.glob,
		Timeout:         ms(s.cfg.Search.TimeoutMs),
		ConcurrencySafe: alwaysConcurrent,
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a globArgs
			_ = decodeArgs(nameGlob, call, &a)
			v := &tools.CallView{Kind: tools.KindSearch, Title: "Find " + a.Pattern, RawInput: rawInput(call)}
			if root, _, err := globRoot(call, a); err == nil {
				v.Locations = []tools.FileLocation{{Path: root}}
				if root != call.Cwd {
					v.Title += " in " + display(call, root)
				}
			}
			return v
		},
	}
}

// globRoot returns the directory a glob walks and the pattern relative to
// it. An absolute pattern carries its own root and overrides path.
func globRoot(call *tools.Call, a globArgs) (root, pattern string, err error) {
	pattern = strings.TrimPrefix(filepath.ToSlash(a.Pattern), "./")
	if pattern == "" {
		return "", "", failf(nameGlob, CodeInvalidArgs, "pattern is empty; pass a glob such as **/*.go")
	}
	if filepath.IsAbs(pattern) {
		base, rest := doublestar.SplitPattern(pattern)
		return filepath.Clean(base), rest, nil
	}
	root, err = searchRoot(nameGlob, call, a.Path)
	return root, pattern, err
}

// searchView is the call card of glob and grep: the search root is its
// location.
func searchView(call *tools.Call, title, path string) *tools.CallView {
	v := &tools.CallView{Kind: tools.KindSearch, Title: title, RawInput: rawInput(call)}
	root := call.Cwd
	if path != "" {
		abs, err := resolvePath("", call, path, "path")
		if err != nil {
			return v
		}
		root = abs
		v.Title += " in " + display(call, abs)
	}
	if root != "" {
		v.Locations = []tools.FileLocation{{Path: root}}
	}
	return v
}

// searchRoot resolves the optional path argument of glob and grep.
func searchRoot(errName string, call *tools.Call, path string) (string, error) {
	if path == "" {
		if call.Cwd == "" {
			return "", failf(errName, CodeNoWorkspace, "this session has no working directory; pass an absolute path")
		}
		return call.Cwd, nil
	}
	return resolvePath(errName, call, path, "path")
}

func (s *Set) glob(ctx context.Context, call *tools.Call) (any, error) {
	var a globArgs
	if err := decodeArgs(nameGlob, call, &a); err != nil {
		return nil, err
	}
	root, pattern, err := globRoot(call, a)
	if err != nil {
		return nil, err
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, failf(nameGlob, CodeInvalidPattern, "invalid glob pattern %q: check for an unclosed [ or {", a.Pattern)
	}
	fsys := call.Access.FS()
	defer fsys.Close()
	if err := requireDir(nameGlob, call, fsys, root); err != nil {
		return nil, err
	}
	type hit struct {
		path string
		mod  time.Time
	}
	var hits []hit
	err = walkFiles(ctx, fsys, root, func(path string, d fs.DirEntry) error {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil
		}
		if ok, _ := doublestar.Match(pattern, filepath.ToSlash(rel)); !ok {
			return nil
		}
		var mod time.Time
		if info, err := d.Info(); err == nil {
			mod = info.ModTime()
		}
		hits = append(hits, hit{path, mod})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No files match %s in %s.", a.Pattern, place(call, root)), nil
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mod.Equal(hits[j].mod) {
			return hits[i].mod.After(hits[j].mod)
		}
		return hits[i].path < hits[j].path
	})
	var b strings.Builder
	for i, h := range hits {
		if i == s.cfg.Search.MaxResults {
			break
		}
		b.WriteString(display(call, h.path))
		b.WriteByte('\n')
	}
	writeMore(&b, len(hits)-s.cfg.Search.MaxResults)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func writeMore(b *strings.Builder, more int) {
	if more > 0 {
		fmt.Fprintf(b, "(%d more %s not shown; narrow the pattern)\n", more, plural(more, "result", "results"))
	}
}

// requireDir checks that root is an existing directory.
func requireDir(errName string, call *tools.Call, fsys *confine.FS, root string) error {
	fi, err := fsys.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return failf(errName, CodeNotFound, "directory not found: %s", display(call, root))
		}
		return openFailure(errName, call, fsys, root, err)
	}
	if !fi.IsDir() {
		return failf(errName, CodeInvalidArgs, "%s is a file, not a directory; pass its directory as path", display(call, root))
	}
	return nil
}
