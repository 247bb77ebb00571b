package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// runSandbox points the deepseek provider at a fake endpoint.
func runSandbox(t *testing.T, script ...fakellm.Reply) (*sandbox, *fakellm.Server) {
	t.Helper()
	srv := fakellm.New(script...)
	t.Cleanup(srv.Close)
	s := newSandbox(t)
	s.env["DSH_LLM_BASE_URL"] = srv.URL
	s.env["DSH_LLM_API_KEY"] = "test-key"
	return s, srv
}

// sessionEvents loads the only session persisted under the sandbox home.
func sessionEvents(t *testing.T, s *sandbox) []session.Event {
	t.Helper()
	st := store.New(filepath.Join(s.home, "sessions"), store.Options{})
	entries, err := st.List(t.Context())
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one persisted session, got %d (%v)", len(entries), err)
	}
	_, events, err := st.Inspect(t.Context(), entries[0].Header.ID)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestRunPrintsTheFinalAnswerOfACompletedTurn(t *testing.T) {
	s, srv := runSandbox(t, fakellm.Reply{Reasoning: "easy", Text: "Hello from dsh."})
	r := s.run("run", "say", "hello")
	if r.code != exitOK || r.stdout != "Hello from dsh.\n" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("model calls = %d, want 1", n)
	}
	var sawPrompt bool
	for _, e := range sessionEvents(t, s) {
		if e.Type == session.TypeUserMessage && strings.Contains(string(e.Data), "say hello") {
			sawPrompt = true
		}
	}
	if !sawPrompt {
		t.Fatal("the task was not logged as a user message")
	}
}

func TestRunDeniesToolsThatWouldAskUnlessBypass(t *testing.T) {
	s, _ := runSandbox(t,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"touch made.txt","description":"make a file"}`}}},
		fakellm.Reply{Text: "I could not run it."},
	)
	r := s.run("run", "make a file")
	if r.code != exitOK {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(s.cwd, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("bash ran without approval: %v", err)
	}
	var denied bool
	for _, e := range sessionEvents(t, s) {
		if e.Type == session.TypeToolResult && strings.Contains(string(e.Data), `"isError":true`) {
			denied = true
		}
	}
	if !denied {
		t.Fatal("the denied call has no error result")
	}
}

func TestRunWithoutAKeyFailsBeforeCreatingASession(t *testing.T) {
	s := newSandbox(t)
	r := s.exec(execOptions{}, "run", "hello")
	if r.code != exitError || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("want one line and exit 1, got code %d stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"DEEPSEEK_API_KEY", filepath.Join(s.home, "config.yaml"), "--profile demo", "MISSING_CREDENTIAL"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %q", want, r.stderr)
		}
	}
	entries, err := store.New(filepath.Join(s.home, "sessions"), store.Options{}).List(t.Context())
	if err != nil || len(entries) != 0 {
		t.Fatalf("a session was created without a key: %d (%v)", len(entries), err)
	}
	r = s.exec(execOptions{extraEnv: map[string]string{"OPENAI_API_KEY": "k"}}, "run", "--set", "llm.provider=openai", "--set", "llm.base_url=http://127.0.0.1:1/v1", "--set", "llm.retry.max_retries=0", "hello")
	if strings.Contains(r.stderr, "MISSING_CREDENTIAL") {
		t.Errorf("the openai provider's own variable was not read: %q", r.stderr)
	}
}

func TestRunRejectsAnEmptyTask(t *testing.T) {
	s := newSandbox(t)
	if r := s.run("run", "   "); r.code != exitUsage || !strings.Contains(r.stderr, "task is empty") {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
}

// TestRunBinaryEndToEnd drives the built binary against the fake endpoint
// with real files and a real bash.
func TestRunBinaryEndToEnd(t *testing.T) {
	bin := dshBinary
	s, srv := runSandbox(t,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"printf hello > out.txt && cat out.txt","description":"write a file"}`}}},
		fakellm.Reply{Text: "Wrote out.txt."},
	)
	cmd := exec.Command(bin, "run", "--set", "permissions.mode=bypass", "write hello to out.txt")
	cmd.Dir = s.cwd
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dsh run: %v\nstderr: %s", err, stderr.String())
	}
	if stdout.String() != "Wrote out.txt.\n" {
		t.Fatalf("stdout %q", stdout.String())
	}
	if b, err := os.ReadFile(filepath.Join(s.cwd, "out.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("out.txt = %q, %v", b, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1]), `hello\n[exit code: 0]`) {
		t.Fatalf("second request does not carry the bash result: %s", reqs[len(reqs)-1])
	}
	var types []string
	for _, e := range sessionEvents(t, s) {
		types = append(types, e.Type)
	}
	got := strings.Join(types, " ")
	for _, want := range []string{"turn/start", "request/header", "tool/call", "tool/result", "turn/end"} {
		if !strings.Contains(got, want) {
			t.Fatalf("log lacks %s: %s", want, got)
		}
	}
}

// hostileAnswer is a reply that tries to recolour the terminal, plant a
// link, write the clipboard and reorder text.
const hostileAnswer = "\x1b[31mred\x1b[0m \x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ \x1b]52;c;cm0gLXJmIH4=\x07 \u202eevil\u202c \u009b2J"

func TestRunOnATerminalShowsEscapeSequencesInsteadOfSendingThem(t *testing.T) {
	s, _ := runSandbox(t, fakellm.Reply{Text: hostileAnswer}, fakellm.Reply{Text: hostileAnswer}, fakellm.Reply{Text: hostileAnswer})
	tty := s.exec(execOptions{ttyOut: true}, "run", "say something")
	if tty.code != exitOK {
		t.Fatalf("exit %d stderr %q", tty.code, tty.stderr)
	}
	for _, bad := range []string{"\x1b", "\u009b", "\u202e", "\a"} {
		if strings.Contains(tty.stdout, bad) {
			t.Errorf("the terminal received %q: %q", bad, tty.stdout)
		}
	}
	for _, want := range []string{`\x1b[31mred`, `\x1b]52;c;`, `\u202eevil`, `\x9b2J`} {
		if !strings.Contains(tty.stdout, want) {
			t.Errorf("the terminal does not show %q: %q", want, tty.stdout)
		}
	}
	raw := s.exec(execOptions{ttyOut: true}, "run", "--raw", "say something")
	if raw.code != exitOK || !strings.Contains(raw.stdout, "\x1b]52;c;") {
		t.Errorf("--raw on a terminal: exit %d stdout %q", raw.code, raw.stdout)
	}
	piped := s.exec(execOptions{}, "run", "say something")
	if piped.code != exitOK || piped.stdout != hostileAnswer+"\n" {
		t.Errorf("piped output is not the raw answer: exit %d stdout %q", piped.code, piped.stdout)
	}
}

func TestRunWithTheSessionQueryProfileGivesTheModelTheSessionTools(t *testing.T) {
	s, srv := runSandbox(t, fakellm.Reply{Text: "done"})
	r := s.exec(execOptions{}, "run", "--profile", "session-query", "what did we do last week")
	if r.code != exitOK {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0]), `"session_search"`) {
		t.Fatalf("the model was not offered session_search: %d requests", len(reqs))
	}
}
