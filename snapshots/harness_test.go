package snapshots

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/llm/replay"
)

// dshBin is the dsh binary built once for the whole package.
var dshBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "dsh-snapshots-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dshBin = filepath.Join(dir, "dsh")
	build := exec.Command(goTool(), "build", "-o", dshBin, "./cmd/dsh")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dsh:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// goTool is the go command; go test puts its own toolchain first on PATH.
func goTool() string { return "go" }

// repoRoot is the module root: this package lives one level below it.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// updating reports whether goldens are being rewritten (go test -update).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// input is a scenario's input.json.
type input struct {
	// Class is the header class: "default" or "session-query".
	Class string `json:"class"`
	// Set holds extra config (key=value, as --set takes them).
	Set   []string `json:"set,omitempty"`
	Steps []step   `json:"steps"`
	// PermissionAnswers are option kinds answered in order; a request
	// beyond them is answered "cancelled".
	PermissionAnswers []string `json:"permissionAnswers,omitempty"`
}

// scenario is one directory under testdata/scenarios.
type scenario struct {
	Name  string
	Dir   string
	Input input
}

func loadScenarios(t *testing.T) []*scenario {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenario
	for _, f := range dirs {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := &scenario{Name: filepath.Base(filepath.Dir(f)), Dir: filepath.Dir(f)}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc.Input); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if sc.Input.Class == "" {
			sc.Input.Class = "default"
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		t.Fatal("no scenarios under testdata/scenarios")
	}
	return out
}

// env is the file system of one run: a $DSH_HOME, the scenario's
// workspace, a second, empty workspace and a private spill root.
type env struct {
	home, cwd, other string
	// spill has the length of the snapshot profile's /tmp/dsh-snapshot-spill:
	// spill notices name their file, and the name's length changes how much
	// preview fits under the cap.
	spill string
}

func newEnv(t *testing.T, sc *scenario) *env {
	t.Helper()
	// Paths of a fixed length keep the byte counts of spilled results (and
	// so their previews) the same on every run and machine.
	root := fixedDir(t)
	e := &env{home: filepath.Join(root, "home"), cwd: filepath.Join(root, "ws"), other: filepath.Join(root, "other")}
	for _, d := range []string{e.home, e.cwd, e.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.spill = fixedDir(t)
	if seed := filepath.Join(sc.Dir, "workspace"); fileExists(seed) {
		if err := os.CopyFS(e.cwd, os.DirFS(seed)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// fixedDir creates /tmp/dsh-snap-<9 hex>, as long as the snapshot
// profile's spill root, and removes it after the test.
func fixedDir(t *testing.T) string {
	t.Helper()
	for {
		var b [5]byte
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		dir := "/tmp/dsh-snap-" + hex.EncodeToString(b[:])[:9]
		if err := os.Mkdir(dir, 0o700); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		} else if !errors.Is(err, fs.ErrExist) {
			t.Fatal(err)
		}
	}
}

// settings are the flags of one run: profile snapshot, the class's
// profile file, the replay fixture and the scenario's own settings.
func (sc *scenario) settings(t *testing.T, e *env) (configFile string, set []string) {
	t.Helper()
	set = append(set, "plugins.spill.root="+e.spill)
	if sc.Input.Class == "session-query" {
		configFile = filepath.Join(repoRoot(), "configs", "profiles", "session-query.yaml")
	}
	fixture, _ := filepath.Abs(sc.fixture(t))
	set = append(set, "llm.replay.fixture="+fixture)
	if o := filepath.Join(sc.Dir, "replay.override.json"); fileExists(o) {
		abs, _ := filepath.Abs(o)
		set = append(set, "llm.replay.override="+abs)
	}
	return configFile, append(set, sc.Input.Set...)
}

// fixture is the recorded model script: the scenario directory when more
// than one of its logs called the model (a fork's seed does not count),
// else its session.jsonl. While
// goldens are rewritten, a scenario without a log gets a header-only one
// (its script then comes from replay.override.json).
func (sc *scenario) fixture(t *testing.T) string {
	t.Helper()
	primary := filepath.Join(sc.Dir, "session.jsonl")
	if !fileExists(primary) {
		if !updating() {
			t.Fatalf("%s has no session.jsonl; author it with go test -update", sc.Dir)
		}
		if err := os.WriteFile(primary, []byte(`{"type":"session","version":0,"id":"authoring","createdAt":0}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(sc.Dir, "session.*.jsonl"))
	calling := 0
	for _, f := range append(logs, primary) {
		raw, _ := os.ReadFile(f)
		// A fork's log starts with its parent's events, calls included,
		// up to session/end-seed; only calls after that are its own.
		if _, own, seeded := bytes.Cut(raw, []byte(`"type":"session/end-seed"`)); seeded {
			raw = own
		}
		if bytes.Contains(raw, []byte(`"type":"assistant/chunk"`)) {
			calling++
		}
	}
	if calling > 1 {
		return sc.Dir
	}
	return primary
}

// result is what one run produced.
type result struct {
	stdout []byte
	logs   [][]byte // persisted session logs, ordered by createdAt then id
	stderr string
}

// runInProcess drives the ACP composition through in-memory pipes with
// the SDK's client connection, and checks that the replay script was
// consumed exactly.
func runInProcess(t *testing.T, sc *scenario, e *env) result {
	t.Helper()
	configFile, set := sc.settings(t, e)
	cfg, err := config.Load(config.Options{
		Profile: "snapshot", ConfigFile: configFile, Home: e.home, Cwd: e.cwd, Set: set,
		Sections: compositions.ConfigSections(),
		Env: func(name string) (string, bool) {
			if name == "HOME" {
				return e.home, true
			}
			return "", false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncWriter{w: &bytes.Buffer{}}
	rt, err := compositions.New(context.Background(), compositions.Options{Config: cfg, Kind: compositions.ACP, LogWriter: stderr, Version: "snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := compositions.ServeACP(context.Background(), rt, agentIn, agentOut, "snapshot")
		served <- errors.Join(err, rt.Close())
		_ = agentOut.Close()
	}()
	stdout := drive(t, sc, e, toAgent, fromAgent)
	if err := <-served; err != nil {
		t.Errorf("ServeACP: %v", err)
	}
	if p, ok := rt.Provider.(*replay.Provider); ok {
		if err := p.Check(); err != nil {
			t.Errorf("replay: %v", err)
		}
	}
	return result{stdout: stdout, logs: persistedLogs(t, cfg.Value("sessions.dir").(string)), stderr: stderr.String()}
}

// runBinary drives the built dsh acp as a subprocess.
func runBinary(t *testing.T, sc *scenario, e *env) result {
	t.Helper()
	configFile, set := sc.settings(t, e)
	args := []string{"acp", "--profile", "snapshot", "--home", e.home}
	if configFile != "" {
		args = append(args, "--config", configFile)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(dshBin, args...)
	cmd.Dir = e.cwd
	cmd.Env = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	toAgent, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	fromAgent, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout := drive(t, sc, e, toAgent, fromAgent)
	if err := cmd.Wait(); err != nil {
		t.Errorf("dsh acp exited with %v; stderr:\n%s", err, stderr.String())
	}
	return result{stdout: stdout, logs: persistedLogs(t, filepath.Join(e.home, "sessions")), stderr: stderr.String()}
}

// persistedLogs reads every session.jsonl under the sessions root, ordered
// by the header's createdAt, then id.
func persistedLogs(t *testing.T, root string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*", "*", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		created int64
		id      string
		raw     []byte
	}
	var es []entry
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			ID        string `json:"id"`
			CreatedAt int64  `json:"createdAt"`
		}
		first, _, _ := bytes.Cut(raw, []byte("\n"))
		if err := json.Unmarshal(first, &h); err != nil {
			t.Fatalf("%s: header: %v", f, err)
		}
		es = append(es, entry{h.CreatedAt, h.ID, raw})
	}
	slices.SortFunc(es, func(a, b entry) int {
		if a.created != b.created {
			return int(a.created - b.created)
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([][]byte, len(es))
	for i, e := range es {
		out[i] = e.raw
	}
	return out
}

// logName is the file of the i-th persisted log in a scenario directory.
func logName(i int) string {
	if i == 0 {
		return "session.jsonl"
	}
	return fmt.Sprintf("session.%d.jsonl", i)
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
