package codingtools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// confined gives call the access the permission policy grants a call whose
// paths are all inside its workspace.
func confined(call *tools.Call, paths ...string) *tools.Call {
	var grants []confine.Grant
	for _, p := range paths {
		grants = append(grants, confine.Beneath(p, call.Cwd))
	}
	call.Access = confine.Grants(grants...)
	return call
}

func toolCode(err error) string {
	var te *tools.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// TestConfinedToolsRefuseLinksOutAndHardLinks pins what every file tool
// does with a call confined to the workspace: a link leading out is refused
// by read, write and edit (nothing outside is read, created or changed),
// and grep skips a hard-linked file, saying so.
func TestConfinedToolsRefuseLinksOutAndHardLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, out := filepath.Join(root, "ws"), filepath.Join(root, "out")
	writeFile(t, filepath.Join(out, "secret.txt"), "SECRET\n")
	writeFile(t, filepath.Join(out, "linked.txt"), "SECRET linked\n")
	writeFile(t, filepath.Join(ws, "plain.txt"), "SECRET-free inside\n")
	if err := os.Symlink(out, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(out, "linked.txt"), filepath.Join(ws, "linked.txt")); err != nil {
		t.Fatal(err)
	}
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	through := filepath.Join(ws, "out", "secret.txt")

	_, err = s.exec(t, context.Background(), confined(mkCall(t, "read", live, ws, map[string]any{"file_path": "out/secret.txt"}), through))
	if toolCode(err) != CodeOutsideWorkspace || !strings.Contains(err.Error(), "leads outside the workspace") {
		t.Fatalf("read through a link out: %v", err)
	}
	_, err = s.exec(t, context.Background(), confined(mkCall(t, "write", live, ws, map[string]any{"file_path": "out/new.txt", "content": "x"}), filepath.Join(ws, "out", "new.txt")))
	if toolCode(err) != CodeOutsideWorkspace {
		t.Fatalf("create through a link out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "new.txt")); err == nil {
		t.Fatal("created outside")
	}
	_, err = s.exec(t, context.Background(), confined(mkCall(t, "read", live, ws, map[string]any{"file_path": "linked.txt"}), filepath.Join(ws, "linked.txt")))
	if toolCode(err) != CodeOutsideWorkspace || !strings.Contains(err.Error(), "hard-linked") {
		t.Fatalf("read of a hard-linked file: %v", err)
	}

	text := s.mustExec(t, confined(mkCall(t, "grep", live, ws, map[string]any{"pattern": "SECRET", "output_mode": "content"}), ws))
	if strings.Contains(text, "SECRET linked") || !strings.Contains(text, "plain.txt:1: SECRET-free inside") || !strings.Contains(text, "(1 hard-linked file skipped") {
		t.Fatalf("grep:\n%s", text)
	}
	text = s.mustExec(t, confined(mkCall(t, "glob", live, ws, map[string]any{"pattern": "**/*"}), ws))
	if strings.Contains(text, "secret.txt") {
		t.Fatalf("glob listed outside names:\n%s", text)
	}
}
