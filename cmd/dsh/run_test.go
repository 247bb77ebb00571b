package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	if r.code != exitError || !strings.Contains(r.stderr, "dsh: denied bash") || !strings.Contains(r.stderr, "touch made.txt") ||
		!strings.Contains(r.stderr, "1 tool call was denied") || r.stdout != "I could not run it.\n" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
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

func TestTheKeyCheckReadsOnlyTheEnvironmentDshWasGiven(t *testing.T) {
	// A developer's own key in the test process must not reach an
	// in-process run: the key is looked up through dsh's environment.
	t.Setenv("DEEPSEEK_API_KEY", "the-developers-key")
	s := newSandbox(t)
	r := s.run("run", "hello")
	if r.code != exitError || !strings.Contains(r.stderr, "MISSING_CREDENTIAL") {
		t.Fatalf("the process environment's key was used: code %d stderr %q", r.code, r.stderr)
	}
	s.env["DEEPSEEK_API_KEY"] = "the-sandboxs-key"
	s.env["DSH_LLM_BASE_URL"] = "http://127.0.0.1:1"
	s.env["DSH_LLM_RETRY_MAX_RETRIES"] = "0"
	if r := s.run("run", "hello"); strings.Contains(r.stderr, "MISSING_CREDENTIAL") {
		t.Errorf("the sandbox's key was not read: %q", r.stderr)
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

func TestRunReadsTheTaskFromStdin(t *testing.T) {
	s, srv := runSandbox(t, fakellm.Reply{Text: "one"}, fakellm.Reply{Text: "two"})
	dash := s.exec(execOptions{stdin: strings.NewReader("explain the walrus module\n")}, "run", "-")
	piped := s.exec(execOptions{stdin: strings.NewReader("and the otter module")}, "run")
	if dash.code != exitOK || piped.code != exitOK {
		t.Fatalf("exit %d/%d stderr %q %q", dash.code, piped.code, dash.stderr, piped.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0]), "explain the walrus module") || !strings.Contains(string(reqs[1]), "and the otter module") {
		t.Fatalf("the model was not sent the piped tasks: %d requests", len(reqs))
	}
	if r := s.exec(execOptions{stdin: strings.NewReader("  \n")}, "run", "-"); r.code != exitUsage || !strings.Contains(r.stderr, "stdin is empty") {
		t.Errorf("empty stdin: exit %d stderr %q", r.code, r.stderr)
	}
	if r := s.exec(execOptions{ttyOut: true, ttyIn: true}, "run"); r.code != exitUsage || !strings.Contains(r.stderr, "give the task") {
		t.Errorf("no task on a terminal: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestRunNamesTheSessionAndReportsRetriesOnStderr(t *testing.T) {
	s, _ := runSandbox(t, fakellm.Reply{Status: 503, Body: `{"error":{"message":"overloaded"}}`}, fakellm.Reply{Text: "fine now"})
	r := s.exec(execOptions{}, "run", "--set", "llm.retry.initial_delay_ms=1", "hello")
	if r.code != exitOK || r.stdout != "fine now\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	entries, err := store.New(filepath.Join(s.home, "sessions"), store.Options{}).List(t.Context())
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one session: %d (%v)", len(entries), err)
	}
	id := entries[0].Header.ID
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 2 || lines[0] != "dsh: session "+id ||
		!strings.HasPrefix(lines[1], "dsh: the model request failed: ") || !strings.Contains(lines[1], "retry 1 of 5") {
		t.Fatalf("stderr is not the session line and one retry line (no log records): %q (session %s)", r.stderr, id)
	}
}

func TestRunJSONAndStreamJSON(t *testing.T) {
	s, _ := runSandbox(t,
		fakellm.Reply{Text: "the answer"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"touch x","description":"x"}`}}},
		fakellm.Reply{Text: "streamed answer"},
	)
	r := s.exec(execOptions{}, "run", "--json", "hello")
	if r.code != exitOK {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	var rep struct {
		Type, SessionID, Result, StartedAt string
		Completed                          bool
		Denied                             []struct{ Tool string } `json:"deniedToolCalls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	if rep.Type != "result" || !rep.Completed || rep.Result != "the answer" || rep.SessionID == "" || !strings.Contains(r.stderr, rep.SessionID) {
		t.Errorf("--json = %+v", rep)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z07:00", rep.StartedAt); err != nil {
		t.Errorf("startedAt %q is not RFC 3339 with milliseconds", rep.StartedAt)
	}
	st := s.exec(execOptions{}, "run", "--output-format", "stream-json", "make x")
	if st.code != exitError {
		t.Fatalf("the denied call must fail the run: exit %d stderr %q", st.code, st.stderr)
	}
	var types []string
	lines := strings.Split(strings.TrimSpace(st.stdout), "\n")
	for _, l := range lines {
		var e struct{ Type string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		types = append(types, e.Type)
	}
	got := strings.Join(types, " ")
	for _, want := range []string{"turn/start", "user/message", "tool/call", "tool/result", "assistant/message", "turn/end"} {
		if !strings.Contains(got, want) {
			t.Errorf("stream lacks %s: %s", want, got)
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil || rep.Type != "result" || rep.Completed || len(rep.Denied) != 1 || rep.Denied[0].Tool != "bash" {
		t.Errorf("last line = %s (%v)", lines[len(lines)-1], err)
	}
	if r := s.exec(execOptions{}, "run", "--output-format", "yaml", "x"); r.code != exitUsage {
		t.Errorf("bad format: exit %d", r.code)
	}
}
