package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Project is what Load did with the project file, <cwd>/.dsh/config.yaml.
type Project struct {
	// File is the project file's path; empty when there is none.
	File string
	// Dir is the folder it configures (the working directory).
	Dir string
	// Trusted is set when the folder is trusted (dsh trust) or the file is
	// the user config itself; every key then applies.
	Trusted bool
	// Ignored lists, sorted, the keys of an untrusted project file that
	// were not applied.
	Ignored []string
	// OutsideMode is set when the project file decided permissions.mode:
	// the mode the other layers give, which a session whose workspace is
	// not Dir starts in, since a folder's config configures that folder
	// only (a trusted folder's bypass must not follow the editor into
	// another checkout).
	OutsideMode string
}

// Configures reports whether the project file configures sessions in
// workspace: only the folder it belongs to, not its subfolders (dsh
// reads ./.dsh/config.yaml only) and not a folder named by ACP's
// session/new.
func (p Project) Configures(workspace string) bool {
	if filepath.Clean(workspace) == filepath.Clean(p.Dir) {
		return true
	}
	a, errA := os.Stat(workspace)
	b, errB := os.Stat(p.Dir)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// Warning is the one-line notice about ignored keys, or "" when nothing was
// ignored.
func (p Project) Warning() string {
	if len(p.Ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("ignoring %s in %s: this folder is not trusted, and these keys could run code, widen permissions, redirect the model or its key, or move dsh's files; if you trust this folder, run: dsh trust %s",
		strings.Join(p.Ignored, ", "), p.File, shellWord(p.Dir))
}

// splitUntrusted keeps the safe keys of an untrusted project layer and
// returns the others, narrowing keys aside, which are decided once the
// layers below are known.
func (t *schema) splitUntrusted(l layer) (kept layer, narrowing layer, ignored []string) {
	kept, narrowing = layer{}, layer{}
	for k, s := range l {
		switch {
		case t.safe[k]:
			kept[k] = s
		case t.stricter[k] != nil:
			narrowing[k] = s
		default:
			ignored = append(ignored, k)
		}
	}
	return kept, narrowing, ignored
}

// narrow moves into kept each narrowing setting that is at least as strict
// as the effective value of the layers below, and returns the others.
func (t *schema) narrow(kept, narrowing layer, below []layer) (ignored []string) {
	for k, s := range narrowing {
		var under any
		for _, l := range below {
			if b, ok := l[k]; ok {
				under = b.value
			}
		}
		if under != nil && t.stricter[k](under, s.value) {
			kept[k] = s
			continue
		}
		ignored = append(ignored, k)
	}
	return ignored
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@~+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
