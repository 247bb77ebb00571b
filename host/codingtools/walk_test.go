package codingtools

import (
	"path/filepath"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/confine"
)

func TestIgnoreRulesFollowGitSemantics(t *testing.T) {
	root := workspace(t)
	writeFile(t, filepath.Join(root, ".gitignore"), "*.log\n!important.log\nnode_modules/\ndocs/build\n/only-top\n**/cache\n\\#literal\n")
	rules := loadIgnoreFile(confine.Unrestricted().FS(), filepath.Join(root, ".gitignore"), root)
	cases := []struct {
		path  string
		dir   bool
		want  bool
		label string
	}{
		{"a.log", false, true, "glob"},
		{"deep/er/a.log", false, true, "glob at any depth"},
		{"important.log", false, false, "negation re-includes"},
		{"node_modules", true, true, "directory pattern"},
		{"node_modules", false, false, "directory pattern skips a file of that name"},
		{"docs/build", true, true, "middle slash anchors to the file's directory"},
		{"x/docs/build", true, false, "middle slash does not float"},
		{"only-top", false, true, "leading slash"},
		{"sub/only-top", false, false, "leading slash does not float"},
		{"a/b/cache", true, true, "leading **/"},
		{"#literal", false, true, "escaped hash"},
		{"main.go", false, false, "unmatched"},
	}
	for _, tc := range cases {
		if got := ignored(rules, filepath.Join(root, tc.path), tc.dir); got != tc.want {
			t.Errorf("%s: ignored(%s, dir=%v) = %v, want %v", tc.label, tc.path, tc.dir, got, tc.want)
		}
	}
}
