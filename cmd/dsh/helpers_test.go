package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// sandbox is a hermetic process environment for one dsh invocation.
type sandbox struct {
	t    *testing.T
	home string // $DSH_HOME
	cwd  string
	env  map[string]string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{t: t, home: filepath.Join(root, "dsh-home"), cwd: filepath.Join(root, "project"), env: map[string]string{}}
	s.env["HOME"] = filepath.Join(root, "user")
	s.env["DSH_HOME"] = s.home
	for _, d := range []string{s.home, s.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *sandbox) write(path, content string) string {
	s.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.cwd, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

type result struct {
	code           int
	stdout, stderr string
}

func (s *sandbox) run(args ...string) result {
	s.t.Helper()
	var out, errOut bytes.Buffer
	g := &globals{
		stdin:  bytes.NewReader(nil),
		stdout: &out,
		stderr: &errOut,
		env: func(name string) (string, bool) {
			v, ok := s.env[name]
			return v, ok
		},
		environ: func() []string {
			var out []string
			for k, v := range s.env {
				out = append(out, k+"="+v)
			}
			return out
		},
		cwd: s.cwd,
	}
	code := execute(context.Background(), args, g)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}
