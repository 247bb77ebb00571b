package sandbox

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
)

// Denial is one access the sandbox (probably) refused, told from a
// command's output: Landlock reports nothing to the parent, so dsh reads
// the EACCES and EPERM messages programs print.
type Denial struct {
	// Kind is "write", "create" (a new entry directly in a writable root
	// that keeps a read-only .git or .dsh), "read", "network", or "" when
	// the line does not say.
	Kind string
	// Path is the path the command tried, when the line names one the
	// policy keeps out of reach.
	Path string
	// Line is the output line the denial was read from (trimmed, short).
	Line string
}

// String words the denial for a person: "write /etc/hosts".
func (d Denial) String() string {
	switch {
	case d.Kind == "network":
		return "network access (" + d.Line + ")"
	case d.Kind == "create":
		return "create " + d.Path + " (in the sandbox no new file or folder can be made directly in " + filepath.Dir(d.Path) + ", which keeps its .git and .dsh read-only; make it with the write tool or in a subfolder)"
	case d.Path != "":
		return d.Kind + " " + d.Path
	default:
		return d.Line
	}
}

// maxDenials bounds how many denials one result lists.
const maxDenials = 5

var (
	deniedRe = lazyregexp.New(`(?i)permission denied|operation not permitted|\beacces\b|\beperm\b|read-only file system`)
	// pathRe finds path-like words: quoted, or bare with a slash.
	pathRe = lazyregexp.New(`'([^']+)'|"([^"]+)"|‘([^’]+)’|([\w.+-]*/[^\s:'"),;]*)|([^\s:'"/]+): (?i:permission denied|operation not permitted)`)
	netRe  = lazyregexp.New(`(?i)\b(connect|bind|dial|socket)\b|/dev/(tcp|udp)/|\bnetwork\b`)
	// progRe is the "program: " prefix of an error line, whose path is
	// the program's, not the one it was denied.
	progRe = lazyregexp.New(`^\s*\S+:\s`)
)

// Denials reads the denials out of a sandboxed command's output, at most a
// few. cwd resolves relative paths. A permission error on a path the policy
// allows is the file's own permissions, not the sandbox, and is left out;
// a line naming no path is kept with an empty Kind, since it may be either.
func Denials(output []byte, p Policy, cwd string) []Denial {
	var out []Denial
	sc := bufio.NewScanner(bytes.NewReader(output))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() && len(out) < maxDenials {
		line := sc.Text()
		if !deniedRe.MatchString(line) {
			continue
		}
		d, ok := classify(line, p, cwd)
		if ok && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func classify(line string, p Policy, cwd string) (Denial, bool) {
	short := strings.TrimSpace(line)
	if len(short) > 200 {
		short = short[:200] + "…"
	}
	if !p.Network && netRe.MatchString(line) {
		return Denial{Kind: "network", Line: short}, true
	}
	if loc := progRe.FindStringIndex(line); loc != nil {
		line = line[loc[1]:]
	}
	pathSeen := false
	for _, m := range pathRe.FindAllStringSubmatch(line, -1) {
		raw := firstNonEmpty(m[1:]...)
		if raw == "" || strings.HasPrefix(raw, "/dev/tcp/") || strings.HasPrefix(raw, "/dev/udp/") {
			continue
		}
		if !strings.Contains(raw, "/") && m[1] == "" && m[2] == "" && m[3] == "" && m[5] == "" {
			continue
		}
		abs := raw
		if !filepath.IsAbs(abs) {
			if cwd == "" {
				continue
			}
			abs = filepath.Join(cwd, abs)
		}
		abs = filepath.Clean(abs)
		pathSeen = true
		if kind := p.refuses(abs); kind != "" {
			return Denial{Kind: kind, Path: abs, Line: short}, true
		}
	}
	if pathSeen {
		// Only allowed paths: the file's own permissions said no.
		return Denial{}, false
	}
	return Denial{Line: short}, true
}

// refuses says how the policy keeps abs out of reach: "read" when it is
// hidden, "write" when it is outside every writable root or read-only, ""
// when the policy allows writing it.
func (p Policy) refuses(abs string) string {
	r := resolvePrefix(abs)
	under := func(list []string) bool {
		for _, q := range clean(list) {
			if q = resolvePrefix(filepath.Clean(q)); r == q || isBelow(r, q) {
				return true
			}
		}
		return false
	}
	switch {
	case under(p.Hidden):
		return "read"
	case under(p.ReadOnly):
		return "write"
	case p.uncreatable(r):
		return "create"
	case under(p.Write):
		return ""
	}
	return "write"
}

// uncreatable reports whether r is a missing entry directly in a writable
// root that holds a read-only path, where Plan allows only the existing
// entries.
func (p Policy) uncreatable(r string) bool {
	if _, err := os.Lstat(r); err == nil {
		return false
	}
	dir := filepath.Dir(r)
	for _, w := range clean(p.Write) {
		if resolvePrefix(filepath.Clean(w)) != dir {
			continue
		}
		for _, e := range append(clean(p.ReadOnly), clean(p.Hidden)...) {
			if e = resolvePrefix(filepath.Clean(e)); isBelow(e, dir) {
				if _, err := os.Lstat(e); err == nil {
					return true
				}
			}
		}
	}
	return false
}

// resolvePrefix resolves the symbolic links of abs's longest existing
// prefix.
func resolvePrefix(abs string) string {
	rest := ""
	p := abs
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
