package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	. "github.com/seed-e9b4dba4/dsh/host/config"
)

// world is a hermetic machine: a user home, a dsh home inside it, a project
// directory and an environment that holds only what a test puts there.
type world struct {
	t       *testing.T
	userDir string // $HOME
	home    string // $HOME/.dsh
	cwd     string // the project
	env     map[string]string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{
		t:       t,
		userDir: filepath.Join(root, "user"),
		cwd:     filepath.Join(root, "project"),
		env:     map[string]string{},
	}
	w.home = filepath.Join(w.userDir, ".dsh")
	w.env["HOME"] = w.userDir
	w.env["USERPROFILE"] = w.userDir
	for _, d := range []string{w.home, w.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) lookup(name string) (string, bool) {
	v, ok := w.env[name]
	return v, ok
}

// write creates path (relative paths are under the project) with content.
func (w *world) write(path, content string) string {
	w.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(w.cwd, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return path
}

func (w *world) userFile(content string) string {
	return w.write(filepath.Join(w.home, "config.yaml"), content)
}

func (w *world) projectFile(content string) string {
	return w.write(filepath.Join(w.cwd, ".dsh", "config.yaml"), content)
}

// trustProject marks the project folder trusted, as dsh trust would.
func (w *world) trustProject() {
	w.t.Helper()
	if _, err := OpenTrust(w.home).Add(w.cwd); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) homeProfile(name, content string) string {
	return w.write(filepath.Join(w.home, "profiles", name+".yaml"), content)
}

// opts loads the key tree dsh ships: the built-in sections and every
// section compositions registers, declared once by the package that owns it.
// These tests are an external package so that they can import those owners,
// which import this one.
func (w *world) opts() Options {
	return Options{Cwd: w.cwd, Env: w.lookup, Sections: compositions.ConfigSections()}
}

func (w *world) load(o Options) *Config {
	w.t.Helper()
	c, err := Load(o)
	if err != nil {
		w.t.Fatalf("Load: %v", err)
	}
	return c
}

func (w *world) loadErr(o Options) error {
	w.t.Helper()
	c, err := Load(o)
	if err == nil {
		w.t.Fatalf("Load succeeded, want an error (llm.model = %q)", c.Value("llm.model"))
	}
	return err
}

// configError returns the first *Error in err for key.
func configError(t *testing.T, err error, key string) *Error {
	t.Helper()
	var all []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	} else {
		all = []error{err}
	}
	for _, e := range all {
		var ce *Error
		if errors.As(e, &ce) && ce.Key == key {
			return ce
		}
	}
	t.Fatalf("no config error for key %q in:\n%v", key, err)
	return nil
}

func wantContains(t *testing.T, got error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(got.Error(), p) {
			t.Errorf("error %q does not contain %q", got, p)
		}
	}
}

// shippedTree is the key tree of a Load with the shipped sections.
func shippedTree(t *testing.T) Tree {
	t.Helper()
	tree, err := TreeOf(compositions.ConfigSections())
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
