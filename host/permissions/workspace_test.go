package permissions

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckWorkspaceRefusesBroadFolders(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(root, "users", "me")
	dshHome := filepath.Join(user, ".dsh")
	project := filepath.Join(user, "src", "app")
	elsewhere := filepath.Join(root, "data", "dsh")
	for _, d := range []string{dshHome, project, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "home-link")
	if err := os.Symlink(user, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, data string
		refused   bool
	}{
		{"/", dshHome, true},
		{user, dshHome, true},
		{link, dshHome, true}, // the home reached through a symlink
		{filepath.Join(root, "users"), dshHome, true},
		{filepath.Join(root, "data"), elsewhere, true}, // contains a moved dsh home
		{root, elsewhere, true},                        // contains the user's home
		{project, dshHome, false},
		{filepath.Join(user, "src"), dshHome, false},
		{dshHome + "-sibling", dshHome, false},
	}
	for _, tt := range tests {
		err := CheckWorkspace(tt.dir, user, tt.data)
		var be *BroadWorkspaceError
		if got := errors.As(err, &be); got != tt.refused {
			t.Errorf("CheckWorkspace(%s, data %s) = %v, want refused %v", tt.dir, tt.data, err, tt.refused)
		}
	}
	if err := CheckWorkspace("relative", user); err == nil {
		t.Error("a relative workspace was accepted")
	}
}
