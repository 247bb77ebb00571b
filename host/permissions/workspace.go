package permissions

import (
	"fmt"
	"path/filepath"
)

// BroadWorkspaceError reports a workspace too broad to be one: everything
// inside a workspace is readable without asking, so a workspace of the file
// system root, the user's home or a folder holding dsh's own data would put
// /etc, ~/.ssh or every past session within the model's unasked reach.
type BroadWorkspaceError struct {
	// Dir is the refused workspace.
	Dir string
	// Why completes "Dir is ...", e.g. "your home directory".
	Why string
}

func (e *BroadWorkspaceError) Error() string {
	return fmt.Sprintf("refusing the workspace %s: it is %s, so every file in it (keys, other projects, dsh's own data) would be readable without asking; open a project folder instead", e.Dir, e.Why)
}

// CheckWorkspace returns a *BroadWorkspaceError when dir (compared with
// symlinks resolved) is the file system root, userHome, or a folder that
// contains userHome or one of dataDirs (dsh's home and session logs). Empty or relative
// userHome and dataDirs are skipped.
func CheckWorkspace(dir, userHome string, dataDirs ...string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("the workspace must be an absolute path, got %q", dir)
	}
	d := resolve(dir)
	if filepath.Dir(d) == d {
		return &BroadWorkspaceError{Dir: dir, Why: "the root of the file system"}
	}
	if filepath.IsAbs(userHome) {
		switch h := resolve(userHome); {
		case h == d:
			return &BroadWorkspaceError{Dir: dir, Why: "your home directory"}
		case within(d, h):
			return &BroadWorkspaceError{Dir: dir, Why: "a folder that contains your home directory"}
		}
	}
	for _, data := range dataDirs {
		if filepath.IsAbs(data) && within(d, data) {
			return &BroadWorkspaceError{Dir: dir, Why: "a folder that contains dsh's own data (" + data + ")"}
		}
	}
	return nil
}
