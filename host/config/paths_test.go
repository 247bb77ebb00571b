package config_test

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRelativePathsResolveAgainstTheirSource(t *testing.T) {
	w := newWorld(t)
	w.projectFile("llm: {replay: {fixture: fixtures/s.jsonl}}\nplugins: {spill: {root: ../spill}}\n")
	w.trustProject()
	w.env["DSH_LOG_FILE"] = "logs/dsh.log"
	o := w.opts()
	o.Set = []string{"llm.replay.override=~/override.json"}
	c := w.load(o)

	dshDir := filepath.Join(w.cwd, ".dsh")
	tests := []struct{ key, want string }{
		{"llm.replay.fixture", filepath.Join(dshDir, "fixtures", "s.jsonl")},
		{"plugins.spill.root", filepath.Join(w.cwd, "spill")},
		{"log.file", filepath.Join(w.cwd, "logs", "dsh.log")},
		{"llm.replay.override", filepath.Join(w.userDir, "override.json")},
	}
	for _, tt := range tests {
		if got := c.Value(tt.key); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestDerivedPathsFollowHome(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Home = "relhome"
	c := w.load(o)
	home := filepath.Join(w.cwd, "relhome")
	if c.Home != home {
		t.Errorf("Home = %q, want %q", c.Home, home)
	}
	if c.Value("sessions.dir") != filepath.Join(home, "sessions") || c.Value("session_query.path") != filepath.Join(home, "session-query.db") {
		t.Errorf("sessions.dir = %q, session_query.path = %q, want them under %s", c.Value("sessions.dir"), c.Value("session_query.path"), home)
	}
}

func TestExplicitPathsOverrideDerivedOnes(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	sessions := filepath.Join(t.TempDir(), "s")
	o.Set = []string{"sessions.dir=" + sessions, "session_query.path=:memory:"}
	c := w.load(o)
	if c.Value("sessions.dir") != sessions {
		t.Errorf("sessions.dir = %q, want %q", c.Value("sessions.dir"), sessions)
	}
	if c.Value("session_query.path") != ":memory:" {
		t.Errorf("SessionQuery.Path = %q, want :memory:", c.Value("session_query.path"))
	}
}

func TestHomeDefaultsToDotDshUnderUserHome(t *testing.T) {
	w := newWorld(t)
	w.env["HOME"] = filepath.Join(t.TempDir(), "someone")
	w.env["USERPROFILE"] = w.env["HOME"]
	c := w.load(w.opts())
	if want := filepath.Join(w.env["HOME"], ".dsh"); c.Home != want {
		t.Errorf("Home = %q, want %q", c.Home, want)
	}
}

func TestTrustedProjectFileCanMoveHome(t *testing.T) {
	w := newWorld(t)
	w.projectFile("home: ../local-home\n")
	w.trustProject()
	w.write(filepath.Join(w.cwd, "local-home", "config.yaml"), "llm: {model: local}\n")
	c := w.load(w.opts())
	if want := filepath.Join(w.cwd, "local-home"); c.Home != want {
		t.Errorf("Home = %q, want %q", c.Home, want)
	}
	if c.Value("llm.model") != "local" {
		t.Errorf("llm.model = %q, want the user file of the moved home", c.Value("llm.model"))
	}
}

// When the project is the user's home directory, ~/.dsh/config.yaml is both
// the user file and the project file; it is read once, as the project file.
func TestUserFileThatIsAlsoTheProjectFileIsReadOnce(t *testing.T) {
	w := newWorld(t)
	w.cwd = w.userDir
	path := w.userFile("llm: {model: once}\n")
	c := w.load(w.opts())
	if c.Value("llm.model") != "once" || c.Origin("llm.model") != path {
		t.Errorf("llm.model = %q from %q", c.Value("llm.model"), c.Origin("llm.model"))
	}
	if got := c.Files(); len(got) != 1 {
		t.Errorf("Files() = %v, want one file", got)
	}
}

func TestUnreadableConfigPathIsAnError(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.cwd, ".dsh", "config.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantContains(t, w.loadErr(w.opts()), "cannot read config file", filepath.Join(w.cwd, ".dsh", "config.yaml"))
}
