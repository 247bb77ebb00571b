package codingtools

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// resolvePath turns a model-supplied path into a clean absolute path. A
// relative path needs the session's working directory.
func resolvePath(errName string, call *tools.Call, p, param string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", failf(errName, CodeInvalidArgs, "%s is empty; pass an absolute path or one relative to the working directory", param)
	}
	if strings.ContainsRune(p, 0) {
		return "", failf(errName, CodeInvalidArgs, "%s contains a NUL byte", param)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if call.Cwd == "" {
		return "", failf(errName, CodeNoWorkspace, "%s %q is relative but this session has no working directory; pass an absolute path", param, p)
	}
	return filepath.Join(call.Cwd, p), nil
}

// display renders abs relative to the session's working directory when it is
// inside it, so results stay short and can be passed straight back.
func display(call *tools.Call, abs string) string {
	if call.Cwd == "" {
		return abs
	}
	rel, err := filepath.Rel(call.Cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return rel
}

// realPath resolves symlinks so that one file reached by two names shares
// its read record. A path that does not exist resolves to itself.
func realPath(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// place names a directory in a sentence: the working directory itself reads
// better spelled out than as ".".
func place(call *tools.Call, abs string) string {
	if d := display(call, abs); d != "." {
		return d
	}
	return "the working directory"
}
