package codingtools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func bashCall(t *testing.T, ws, command string, extra map[string]any) map[string]any {
	t.Helper()
	args := map[string]any{"command": command, "description": "test"}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

func runBash(t *testing.T, s *Set, ws, command string, extra map[string]any) string {
	t.Helper()
	return s.mustExec(t, mkCall(t, "bash", nil, ws, bashCall(t, ws, command, extra)))
}

func TestBashOutputAndMarkers(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	cases := []struct {
		name, command, want string
	}{
		{"success", "echo hello", "hello\n[exit code: 0]"},
		{"exit code", "echo failing; exit 3", "failing\n[exit code: 3]"},
		{"no output", "true", "(no output)\n[exit code: 0]"},
		{"no output and failure", "false", "(no output)\n[exit code: 1]"},
		{"missing final newline", "printf abc", "abc\n[exit code: 0]"},
		{"stdout and stderr interleave in write order", "echo a; echo b >&2; echo c; echo d >&2", "a\nb\nc\nd\n[exit code: 0]"},
		{"stdin is empty", "cat; echo done", "done\n[exit code: 0]"},
		{"runs in the working directory", "pwd", ws + "\n[exit code: 0]"},
		{"killed by a signal", "echo before; kill -KILL $$", "before\n[killed by signal: SIGKILL]"},
		{"fresh shell each call", "echo ${DSH_TEST_UNSET_VAR:-unset}", "unset\n[exit code: 0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runBash(t, s, ws, tc.command, nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBashNeverSharesDshStdoutOrTerminal(t *testing.T) {
	ws := workspace(t)
	got := runBash(t, testSet(t, nil), ws, "readlink /proc/$$/fd/0; readlink /proc/$$/fd/1; readlink /proc/$$/fd/2; tty", nil)
	lines := strings.Split(got, "\n")
	if len(lines) != 5 {
		t.Fatalf("output = %q", got)
	}
	if lines[0] != "/dev/null" {
		t.Errorf("stdin = %q, want /dev/null", lines[0])
	}
	if !strings.HasPrefix(lines[1], "pipe:") || lines[1] != lines[2] {
		t.Errorf("stdout = %q, stderr = %q: want one shared pipe", lines[1], lines[2])
	}
	if self, err := os.Readlink("/proc/self/fd/1"); err == nil && self == lines[1] {
		t.Errorf("the command shares the test's stdout %q", self)
	}
	if lines[3] != "not a tty" || lines[4] != "[exit code: 1]" {
		t.Errorf("tty check = %q %q", lines[3], lines[4])
	}
}

var childPid = regexp.MustCompile(`child=(\d+)`)

func pidFrom(t *testing.T, out string) int {
	t.Helper()
	m := childPid.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no child pid in %q", out)
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// processGone reports whether pid has exited. A zombie counts as gone: it
// is dead, and whether something reaps it is up to the container's init.
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// waitGone polls pid until it exits or the deadline passes; the process is
// external, so polling is the only way to observe it.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !processGone(pid) {
		select {
		case <-deadline.C:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still running", pid)
		case <-tick.C:
		}
	}
}

func TestBashTimeoutKillsTheWholeProcessTree(t *testing.T) {
	ws := workspace(t)
	// The budget is generous so that a loaded machine still starts the
	// child and prints its pid before the deadline.
	got := runBash(t, testSet(t, nil), ws, "sleep 1000 & echo child=$!; wait", map[string]any{"timeout_ms": 1500})
	if !strings.HasSuffix(got, "\n[timed out after 1500ms]") {
		t.Errorf("output = %q", got)
	}
	waitGone(t, pidFrom(t, got))
}

func TestBashTimeoutIsClampedToTheMaximum(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, func(c *Config) { c.Bash.DefaultTimeoutMs = 100; c.Bash.MaxTimeoutMs = 150 })
	got := runBash(t, s, ws, "sleep 1000", map[string]any{"timeout_ms": 999999})
	if got != "(no output)\n[timed out after 150ms]" {
		t.Errorf("output = %q", got)
	}
	got = runBash(t, s, ws, "sleep 1000", nil)
	if got != "(no output)\n[timed out after 100ms]" {
		t.Errorf("default timeout output = %q", got)
	}
}

func TestBashRejectsNonPositiveTimeouts(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	for _, v := range []any{0, -5} {
		_, err := s.exec(t, context.Background(), mkCall(t, "bash", nil, ws, bashCall(t, ws, "true", map[string]any{"timeout_ms": v})))
		wantCode(t, err, CodeInvalidArgs, "timeout_ms must be a positive number")
	}
}

func TestBashCancellationKillsTheProcessTree(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pidFile := filepath.Join(ws, "child.pid")
	type outcome struct {
		out string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		out, err := s.exec(t, ctx, mkCall(t, "bash", nil, ws, bashCall(t, ws, "sleep 1000 & echo $! > child.pid.tmp; mv child.pid.tmp child.pid; wait", nil)))
		done <- outcome{out, err}
	}()
	// The command runs in another process; its pid file is the only signal
	// that it started.
	var pid int
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for pid == 0 {
		select {
		case <-deadline.C:
			t.Fatal("the command never wrote its pid file")
		case o := <-done:
			t.Fatalf("command ended early: %q %v", o.out, o.err)
		case <-tick.C:
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
		}
	}
	cancel()
	o := <-done
	if o.err != nil || o.out != "(no output)\n[cancelled: the command was stopped]" {
		t.Errorf("result = %q, %v", o.out, o.err)
	}
	waitGone(t, pid)
}

func TestBashStopsBackgroundProcessesHoldingTheOutput(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	got := runBash(t, s, ws, "sleep 1000 & echo child=$!", nil)
	if !strings.HasSuffix(got, "\n[background processes still writing output were stopped]\n[exit code: 0]") {
		t.Errorf("output = %q", got)
	}
	waitGone(t, pidFrom(t, got))

	// A background process that redirected its output is left running.
	got = runBash(t, s, ws, "sleep 1000 >/dev/null 2>&1 & echo child=$!", nil)
	pid := pidFrom(t, got)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !strings.HasSuffix(got, "\n[exit code: 0]") || strings.Contains(got, "stopped") {
		t.Errorf("output = %q", got)
	}
	if processGone(pid) {
		t.Error("a detached background process was killed")
	}
	// It lives as long as the Set, not longer.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestBashKeepsTheTailOfHugeOutputAndSavesAllOfIt(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, func(c *Config) { c.Bash.MaxOutputBytes = 1000 })
	got := runBash(t, s, ws, "seq 1 200000; echo 'the error is at the end' >&2; exit 2", nil)

	var full strings.Builder
	for i := 1; i <= 200000; i++ {
		full.WriteString(strconv.Itoa(i) + "\n")
	}
	full.WriteString("the error is at the end\n")

	header := regexp.MustCompile(`^\[output truncated: first (\d+) bytes omitted; full output: (\S+)\]\n`)
	m := header.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no truncation header in %q", got[:min(len(got), 200)])
	}
	body := strings.TrimSuffix(got[len(m[0]):], "[exit code: 2]")
	if len(body) != 1000 || !strings.HasSuffix(full.String(), body) {
		t.Errorf("kept %d bytes %q, want the last 1000 bytes of the output", len(body), body[:min(len(body), 40)])
	}
	if dropped, _ := strconv.Atoi(m[1]); dropped != full.Len()-1000 {
		t.Errorf("dropped = %d, want %d", dropped, full.Len()-1000)
	}
	path := m[2]
	if c := readFile(t, path); c != full.String() {
		t.Errorf("saved output has %d bytes, want %d identical bytes", len(c), full.Len())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, want 0700", di.Mode().Perm())
	}
}

func TestBashTruncationCutsOnARuneBoundary(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, func(c *Config) { c.Bash.MaxOutputBytes = 101 })
	got := runBash(t, s, ws, `for i in $(seq 1 500); do printf 'é'; done`, nil)
	i := strings.Index(got, "]\n")
	tail := strings.TrimSuffix(got[i+2:], "\n[exit code: 0]")
	if !utf8.ValidString(tail) || tail != strings.Repeat("é", 50) {
		t.Errorf("tail = %q", tail)
	}
	if !strings.Contains(got, "first 900 bytes omitted") {
		t.Errorf("header = %q", got[:i+1])
	}
}

func TestBashOutputDirIsPrivatePerSessionAndReported(t *testing.T) {
	ws := workspace(t)
	type report struct{ session, dir string }
	var reported []report
	untrusted := map[string]int{}
	cfg := DefaultConfig()
	cfg.Bash.MaxOutputBytes = 10
	cfg.Bash.OutputDir = filepath.Join(t.TempDir(), "bash-output")
	s, err := New(cfg, Options{OnOutputDir: func(session, dir string) func() {
		reported = append(reported, report{session, dir})
		return func() { untrusted[session]++ }
	}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(session string) string {
		return s.mustExec(t, mkCall(t, "bash", newLive(t, session, ws), ws, bashCall(t, ws, "seq 1 100", nil)))
	}
	got, got2, other := run("a"), run("a"), run("b")
	if len(reported) != 2 || reported[0].session != "a" || reported[1].session != "b" || reported[0].dir == reported[1].dir {
		t.Fatalf("reported %+v, want one directory per session", reported)
	}
	for i, out := range []string{got, got2, other} {
		dir := reported[0].dir
		if i == 2 {
			dir = reported[1].dir
		}
		if !strings.Contains(out, "full output: "+dir+string(filepath.Separator)) {
			t.Errorf("output %q does not name a file in %s", out, dir)
		}
	}
	for _, r := range reported {
		fi, err := os.Stat(r.dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("private dir %s: %v %v", r.dir, fi.Mode(), err)
		}
	}
	s.Forget("a")
	if untrusted["a"] != 1 || untrusted["b"] != 0 {
		t.Fatalf("after Forget(a): %v", untrusted)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if untrusted["b"] != 1 {
		t.Fatalf("after Close: %v", untrusted)
	}
}

// TestAResumedSessionIsTrustedOnItsSavedOutputBeforeItRunsBash: a new Set
// (another process) trusts a session on the directory an earlier one saved
// its output to, in the shared default location, as soon as it is
// attached, and only on its own.
func TestAResumedSessionIsTrustedOnItsSavedOutputBeforeItRunsBash(t *testing.T) {
	ws := workspace(t)
	t.Setenv("TMPDIR", t.TempDir())
	cfg := DefaultConfig()
	cfg.Bash.MaxOutputBytes = 10
	earlier, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := earlier.mustExec(t, mkCall(t, "bash", newLive(t, "resumed", ws), ws, bashCall(t, ws, "seq 1 100", nil)))
	_, saved, ok := strings.Cut(out, "full output: ")
	if !ok {
		t.Fatalf("no saved output named in %q", out)
	}
	saved, _, _ = strings.Cut(saved, "]")
	_ = earlier.Close()

	trusted := map[string][]string{}
	later, err := New(cfg, Options{OnOutputDir: func(session, dir string) func() {
		trusted[session] = append(trusted[session], dir)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	later.Trust("resumed")
	later.Trust("resumed")
	later.Trust("other")
	if got := trusted["resumed"]; len(got) != 1 || got[0] != filepath.Dir(saved) {
		t.Errorf("resumed session trusted on %v, want only %s", got, filepath.Dir(saved))
	}
	if got := trusted["other"]; len(got) != 1 || got[0] == filepath.Dir(saved) || filepath.Dir(got[0]) != filepath.Dir(filepath.Dir(saved)) {
		t.Errorf("another session trusted on %v, want only its own directory beside %s", got, filepath.Dir(saved))
	}
}

func TestBashErrors(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	_, err := s.exec(t, context.Background(), mkCall(t, "bash", nil, "", bashCall(t, "", "true", nil)))
	wantCode(t, err, CodeNoWorkspace)
	_, err = s.exec(t, context.Background(), mkCall(t, "bash", nil, ws, bashCall(t, ws, "  ", nil)))
	wantCode(t, err, CodeInvalidArgs, "command is empty")
	_, err = s.exec(t, context.Background(), mkCall(t, "bash", nil, filepath.Join(ws, "gone"), bashCall(t, ws, "true", nil)))
	wantCode(t, err, CodeStartFailed, "cannot start bash")
}

func TestBashPresentsItsDescriptionAsTitle(t *testing.T) {
	s := testSet(t, nil)
	v := s.def(t, "bash").PresentCall(mkCall(t, "bash", nil, "/w", map[string]any{"command": "go test ./...", "description": "Run the tests"}))
	if v.Kind != "execute" || v.Title != "Run the tests" {
		t.Errorf("view = %+v", v)
	}
	if s.def(t, "bash").ConcurrencySafe != nil {
		t.Error("bash must be exclusive")
	}
}

// The live-output writer of the call's context sees the output while the
// command runs: the first line before the command goes on.
func TestBashTeesOutputIntoTheLiveWriterWhileItRuns(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, nil)
	fifo := filepath.Join(ws, "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	live := &liveRecorder{first: make(chan struct{})}
	done := make(chan string, 1)
	go func() {
		ctx := tools.WithLiveOutput(context.Background(), live)
		out, err := s.exec(t, ctx, mkCall(t, "bash", nil, ws, bashCall(t, ws, "echo first; read line < go-on; echo second", nil)))
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-live.first // the command waits on the fifo until this test writes it
	if err := os.WriteFile(fifo, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := <-done; out != "first\nsecond\n[exit code: 0]" {
		t.Errorf("result = %q", out)
	}
	if got := live.String(); got != "first\nsecond\n" {
		t.Errorf("live output = %q", got)
	}
}

type liveRecorder struct {
	mu    sync.Mutex
	b     strings.Builder
	first chan struct{}
	once  sync.Once
}

func (l *liveRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	l.once.Do(func() { close(l.first) })
	return len(p), nil
}

func (l *liveRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestBashSavesAtMostTheCapAndSaysSo(t *testing.T) {
	ws := workspace(t)
	s := testSet(t, func(c *Config) {
		c.Bash.MaxOutputBytes = 100
		c.Bash.SavedOutput.MaxBytes = 1000
	})
	got := runBash(t, s, ws, "seq 1 20000; echo the end", nil)
	header := regexp.MustCompile(`^\[output truncated: first (\d+) bytes omitted; only the first 1000 bytes of the (\d+) bytes were saved, to (\S+) \(tools.bash.saved_output.max_bytes\), the command kept running\]\n`)
	m := header.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no capped truncation header in %q", got[:min(len(got), 300)])
	}
	var full strings.Builder
	for i := 1; i <= 20000; i++ {
		full.WriteString(strconv.Itoa(i) + "\n")
	}
	full.WriteString("the end\n")
	if m[2] != strconv.Itoa(full.Len()) {
		t.Errorf("total = %s, want %d", m[2], full.Len())
	}
	if saved := readFile(t, m[3]); saved != full.String()[:1000] {
		t.Errorf("saved %d bytes, want the first 1000 of the output", len(saved))
	}
	// The tail is still the output's end.
	if !strings.HasSuffix(got, "20000\nthe end\n[exit code: 0]") {
		t.Errorf("result ends %q", got[max(0, len(got)-40):])
	}
}

func TestBashRemovesOldSavedOutputBeforeSavingMore(t *testing.T) {
	ws := workspace(t)
	base := filepath.Join(t.TempDir(), "bash-output")
	s := testSet(t, func(c *Config) {
		c.Bash.OutputDir = base
		c.Bash.MaxOutputBytes = 10
		c.Bash.SavedOutput.KeepDays = 1
		c.Bash.SavedOutput.KeepTotalBytes = 1 << 20
	})
	live := newLive(t, "s1", ws)
	save := func() string {
		t.Helper()
		got := s.mustExec(t, mkCall(t, "bash", live, ws, bashCall(t, ws, "seq 1 100", nil)))
		m := regexp.MustCompile(`full output: (\S+)\]`).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("nothing saved: %q", got)
		}
		return m[1]
	}
	first := save()
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(first, old, old); err != nil {
		t.Fatal(err)
	}
	second := save()
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("output saved two days ago is still there (keep_days 1): %v", err)
	}
	if readFile(t, second) == "" {
		t.Error("the new output was not saved")
	}
}

func TestBashDefaultOutputDirIsSharedNotPerProcess(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ws := workspace(t)
	var dirs []string
	for range 2 {
		cfg := DefaultConfig()
		cfg.Bash.MaxOutputBytes = 10
		s, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := s.mustExec(t, mkCall(t, "bash", newLive(t, "s1", ws), ws, bashCall(t, ws, "seq 1 100", nil)))
		m := regexp.MustCompile(`full output: (\S+)\]`).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("nothing saved: %q", got)
		}
		dirs = append(dirs, filepath.Dir(filepath.Dir(m[1])))
		_ = s.Close()
	}
	want := filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()), "bash-output")
	if dirs[0] != want || dirs[1] != want {
		t.Errorf("output dirs %q, want both %q", dirs, want)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(tmp, "dsh-bash-*")); len(leftovers) != 0 {
		t.Errorf("per-process directories: %q", leftovers)
	}
}
