package codingtools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// testSet returns a Set with test-friendly limits; mutate adjusts the config.
func testSet(t *testing.T, mutate func(*Config)) *Set {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Bash.OutputDir = filepath.Join(t.TempDir(), "bash-output")
	cfg.Bash.KillGraceMs = 300
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func (s *Set) def(t *testing.T, name string) *tools.Definition {
	t.Helper()
	for _, d := range s.Definitions() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// newLive returns an in-memory session whose workspace is cwd.
func newLive(t *testing.T, id, cwd string) *session.Live {
	t.Helper()
	h := session.Header{ID: id, CreatedAt: 1}
	if cwd != "" {
		h.Cwd = session.Ptr(cwd)
	}
	return session.NewLive(h, nil, session.LiveOptions{})
}

// mkCall builds a call of tool name with args encoded as JSON.
func mkCall(t testing.TB, name string, live *session.Live, cwd string, args any) *tools.Call {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return &tools.Call{CallID: "call-" + name, Name: name, Arguments: string(b), Args: b, Session: live, Cwd: cwd}
}

// exec runs tool name directly and returns its text.
func (s *Set) exec(t *testing.T, ctx context.Context, call *tools.Call) (string, error) {
	t.Helper()
	v, err := s.def(t, call.Name).Execute(ctx, call)
	if err != nil {
		return "", err
	}
	text, ok := v.(string)
	if !ok {
		t.Fatalf("%s returned %T, want string", call.Name, v)
	}
	return text, nil
}

// mustExec runs a call that must succeed.
func (s *Set) mustExec(t *testing.T, call *tools.Call) string {
	t.Helper()
	out, err := s.exec(t, context.Background(), call)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", call.Name, err)
	}
	return out
}

// wantCode asserts err is a coded tool error with code whose message
// contains every fragment.
func wantCode(t *testing.T, err error, code string, fragments ...string) {
	t.Helper()
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("error = %v (%T), want a *tools.Error with code %s", err, err, code)
	}
	if te.Code != code {
		t.Fatalf("code = %s (message %q), want %s", te.Code, te.Message, code)
	}
	for _, f := range fragments {
		if !strings.Contains(te.Message, f) {
			t.Errorf("message %q does not contain %q", te.Message, f)
		}
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// workspace returns a fresh directory with symlinks resolved, so paths the
// tools print compare equal to the ones the test builds.
func workspace(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
