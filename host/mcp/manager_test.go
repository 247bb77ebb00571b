package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

func TestMain(m *testing.M) {
	if mcptest.Serve() {
		os.Exit(0)
	}
	if state := os.Getenv(envParent); state != "" {
		parentMain(state)
	}
	os.Exit(m.Run())
}

const sessionID = "s1"

// fixture is a registry, a live session and a manager over it.
type fixture struct {
	reg    *tools.Registry
	live   *session.Live
	mgr    *mcp.Manager
	mu     sync.Mutex
	status []mcp.Status
	seen   chan mcp.Status
}

func stdioServer(name, mode, state string) mcp.Server {
	cmd, args, env := mcptest.Command(mode, state)
	return mcp.Server{Name: name, Command: cmd, Args: args, Env: env}
}

func start(t *testing.T, opts mcp.Options) *fixture {
	t.Helper()
	f := &fixture{reg: tools.NewRegistry(nil), seen: make(chan mcp.Status, 64)}
	f.live = session.NewLive(session.Header{Version: session.FormatVersion, ID: sessionID}, nil, session.LiveOptions{})
	opts.Session = sessionID
	opts.Registry = f.reg
	opts.Dir = t.TempDir()
	opts.OnStatus = func(s mcp.Status) {
		f.mu.Lock()
		f.status = append(f.status, s)
		f.mu.Unlock()
		select {
		case f.seen <- s:
		default:
		}
	}
	mgr, err := mcp.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.mgr = mgr
	t.Cleanup(func() {
		if err := mgr.Close(); err != nil {
			t.Error(err)
		}
		_ = f.live.Close()
	})
	return f
}

// until waits for a status of server in state.
func (f *fixture) until(t *testing.T, server string, state mcp.State) mcp.Status {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		for _, s := range f.mgr.Status() {
			if s.Name == server && s.State == state {
				return s
			}
		}
		select {
		case <-f.seen:
		case <-timeout:
			t.Fatalf("server %s never reached %s: %+v", server, state, f.mgr.Status())
		}
	}
}

func (f *fixture) run(ctx context.Context, name, args string) tools.Result {
	return f.reg.Run(ctx, &tools.Call{CallID: "c-" + name, Name: name, Arguments: args, Session: f.live})
}

func text(res tools.Result) string {
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func names(reg *tools.Registry) []string {
	var out []string
	for _, s := range reg.SchemasFor(sessionID) {
		out = append(out, s.Name)
	}
	return out
}

func TestStdioServerToolsRoundTrip(t *testing.T) {
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", "")}})
	if err := f.mgr.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := f.until(t, "test", mcp.StateReady)
	// Six tools on three pages of two: pagination was followed.
	if st.Tools != 6 {
		t.Fatalf("tools = %d, want 6 (status %+v)", st.Tools, st)
	}
	want := "mcp__test__add_tool,mcp__test__crash,mcp__test__echo,mcp__test__fail,mcp__test__hang,mcp__test__picture"
	if got := strings.Join(names(f.reg), ","); got != want {
		t.Fatalf("tools = %s", got)
	}
	if len(f.reg.Schemas()) != 0 {
		t.Fatal("MCP tools leaked into the listing every session sees")
	}
	var schema map[string]any
	if err := json.Unmarshal(f.reg.SchemasFor(sessionID)[2].Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("echo schema = %s", f.reg.SchemasFor(sessionID)[2].Parameters)
	}

	res := f.run(context.Background(), "mcp__test__echo", `{"text":"hi"}`)
	if res.IsError || text(res) != "echo: hi" {
		t.Fatalf("echo = %+v", res)
	}
	res = f.run(context.Background(), "mcp__test__echo", `{"text":7}`)
	if !res.IsError || res.Error.Code != tools.CodeInvalidArgs {
		t.Fatalf("arguments against the server's schema were not validated: %+v", res)
	}
	res = f.run(context.Background(), "mcp__test__fail", `{}`)
	if !res.IsError || res.Error.Code != mcp.CodeToolError || !strings.Contains(res.Error.Message, "archived") {
		t.Fatalf("fail = %+v", res)
	}
	res = f.run(context.Background(), "mcp__test__picture", `{}`)
	got := text(res)
	for _, w := range []string{"a red dot:", "[image from MCP server test: image/png, 9 bytes; not shown", "[resource file:///notes.txt]\nthe notes"} {
		if !strings.Contains(got, w) {
			t.Fatalf("picture result %q lacks %q", got, w)
		}
	}
	def, _ := f.reg.Lookup(sessionID, "mcp__test__echo")
	if def.Effect != tools.EffectExecute {
		t.Fatal("a read-only hint was honoured without the opt-in")
	}
	if v := def.PresentCall(&tools.Call{Args: json.RawMessage(`{"text":"x"}`)}); v.Title != "test: echo" {
		t.Fatalf("card title = %q", v.Title)
	}
}

func TestReadOnlyHintsOnlyWithOptIn(t *testing.T) {
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", "")}, TrustReadOnlyHints: true})
	f.until(t, "test", mcp.StateReady)
	echo, _ := f.reg.Lookup(sessionID, "mcp__test__echo")
	crash, _ := f.reg.Lookup(sessionID, "mcp__test__crash")
	if echo.Effect != tools.EffectRead || crash.Effect != tools.EffectExecute {
		t.Fatalf("effects: echo %v crash %v", echo.Effect, crash.Effect)
	}
}

func TestListChangedAddsTheNewTool(t *testing.T) {
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", "")}})
	f.until(t, "test", mcp.StateReady)
	if res := f.run(context.Background(), "mcp__test__add_tool", `{}`); res.IsError {
		t.Fatal(res.Error.Message)
	}
	timeout := time.After(30 * time.Second)
	for {
		if _, ok := f.reg.Lookup(sessionID, "mcp__test__late"); ok {
			break
		}
		select {
		case <-f.seen:
		case <-timeout:
			t.Fatalf("list_changed did not bring the new tool: %v", names(f.reg))
		}
	}
	if res := f.run(context.Background(), "mcp__test__late", `{}`); text(res) != "late tool ran" {
		t.Fatalf("late = %+v", res)
	}
}

func TestCrashMidCallReportsItAndRestartsOnce(t *testing.T) {
	state := t.TempDir()
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "crash-once", state)}})
	f.until(t, "test", mcp.StateReady)
	res := f.run(context.Background(), "mcp__test__crash", `{}`)
	if !res.IsError || res.Error.Code != mcp.CodeServerCrashed {
		t.Fatalf("crash = %+v", res)
	}
	for _, w := range []string{"MCP server test stopped during the call of crash", "exit status 3", "panic: the crash tool was called"} {
		if !strings.Contains(res.Error.Message, w) {
			t.Fatalf("message %q lacks %q", res.Error.Message, w)
		}
	}
	st := f.until(t, "test", mcp.StateCrashed)
	if !strings.Contains(st.Message(), "restarted on the next call") || !strings.Contains(st.Stderr, "panic") {
		t.Fatalf("crash status = %+v", st)
	}
	// The next call restarts the server; the new process survives.
	res = f.run(context.Background(), "mcp__test__crash", `{}`)
	if res.IsError || text(res) != "survived" {
		t.Fatalf("call after the restart = %+v", res)
	}
	if st := f.until(t, "test", mcp.StateReady); !st.Restarted {
		t.Fatalf("status after restart = %+v", st)
	}
	if n := len(mcptest.Pids(state)); n != 2 {
		t.Fatalf("%d server processes started, want 2", n)
	}
}

func TestSecondCrashRemovesTheTools(t *testing.T) {
	state := t.TempDir()
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", state)}})
	f.until(t, "test", mcp.StateReady)
	f.run(context.Background(), "mcp__test__crash", `{}`)
	f.until(t, "test", mcp.StateCrashed)
	res := f.run(context.Background(), "mcp__test__crash", `{}`)
	if !res.IsError || res.Error.Code != mcp.CodeServerCrashed {
		t.Fatalf("second crash = %+v", res)
	}
	st := f.until(t, "test", mcp.StateFailed)
	if !strings.Contains(st.Error, "stopped again after its restart") || len(names(f.reg)) != 0 {
		t.Fatalf("status %+v, tools %v", st, names(f.reg))
	}
}

func TestHangIsBoundedByTheCallTimeout(t *testing.T) {
	state := t.TempDir()
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", state)}, CallTimeout: 300 * time.Millisecond})
	f.until(t, "test", mcp.StateReady)
	res := f.run(context.Background(), "mcp__test__hang", `{}`)
	if !res.IsError || res.Error.Code != mcp.CodeTimeout {
		t.Fatalf("hang = %+v", res)
	}
	if !strings.Contains(res.Error.Message, "did not answer hang within 300ms") {
		t.Fatalf("message = %q", res.Error.Message)
	}
	if !mcptest.WaitFile(filepath.Join(state, "cancelled"), 30*time.Second) {
		t.Fatal("the server was not told the call was cancelled")
	}
	// The server is still usable.
	if res := f.run(context.Background(), "mcp__test__echo", `{"text":"after"}`); text(res) != "echo: after" {
		t.Fatalf("echo after a timeout = %+v", res)
	}
}

func TestCancelledTurnCancelsTheCall(t *testing.T) {
	state := t.TempDir()
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", state)}})
	f.until(t, "test", mcp.StateReady)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() { done <- f.run(ctx, "mcp__test__hang", `{}`) }()
	if !mcptest.WaitFile(filepath.Join(state, "hanging"), 30*time.Second) {
		t.Fatal("the call never reached the server")
	}
	cancel()
	res := <-done
	if !res.IsError || res.Error.Code != tools.CodeAborted {
		t.Fatalf("cancelled call = %+v", res)
	}
	if !mcptest.WaitFile(filepath.Join(state, "cancelled"), 30*time.Second) {
		t.Fatal("the server was not sent notifications/cancelled")
	}
}

func TestStartFailuresSayWhichServerAndWhy(t *testing.T) {
	f := start(t, mcp.Options{
		Servers: []mcp.Server{
			stdioServer("exits", "exit", ""),
			stdioServer("garbage", "garbage", ""),
			stdioServer("hangs", "hang", ""),
			stdioServer("good", "ok", ""),
			{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")},
			{Name: "badurl", URL: "ftp://example.com"},
			{Name: "needsenv", Command: "x", Env: map[string]string{"TOKEN": "${DSH_TEST_UNSET_TOKEN}"}},
		},
		StartTimeout: 2 * time.Second,
		Env:          func(string) (string, bool) { return "", false },
	})
	if err := f.mgr.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	checks := map[string][]string{
		"exits":    {"could not start", "GITHUB_TOKEN is not set"},
		"garbage":  {"could not start"},
		"hangs":    {"did not finish starting within 2s"},
		"missing":  {"could not start", "no such file"},
		"badurl":   {"must be an absolute http or https URL"},
		"needsenv": {"unset environment variable DSH_TEST_UNSET_TOKEN"},
	}
	for _, st := range f.mgr.Status() {
		if st.Name == "good" {
			if st.State != mcp.StateReady || st.Tools != 6 {
				t.Fatalf("the good server suffered: %+v", st)
			}
			continue
		}
		if st.State != mcp.StateFailed {
			t.Fatalf("%s: state %s", st.Name, st.State)
		}
		msg := st.Message()
		for _, w := range checks[st.Name] {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q lacks %q", st.Name, msg, w)
			}
		}
	}
	if n := len(names(f.reg)); n != 6 {
		t.Fatalf("%d tools registered, want the good server's 6", n)
	}
}

func TestStreamableHTTPServer(t *testing.T) {
	srv := httptest.NewServer(mcptest.Handler(""))
	t.Cleanup(srv.Close)
	f := start(t, mcp.Options{Servers: []mcp.Server{{Name: "web", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer x"}}}})
	st := f.until(t, "web", mcp.StateReady)
	if st.Transport != mcp.TransportHTTP || st.Tools != 6 {
		t.Fatalf("status = %+v", st)
	}
	if res := f.run(context.Background(), "mcp__web__echo", `{"text":"over http"}`); text(res) != "echo: over http" {
		t.Fatalf("echo = %+v", res)
	}
}

func TestSSEServerWithHeaders(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	h := mcptest.SSEHandler("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f := start(t, mcp.Options{
		Servers: []mcp.Server{{Name: "old", Type: mcp.TransportSSE, URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}},
		Env:     func(k string) (string, bool) { return map[string]string{"TOKEN": "s3cret"}[k], k == "TOKEN" },
	})
	st := f.until(t, "old", mcp.StateReady)
	if st.Transport != mcp.TransportSSE || st.Tools != 6 {
		t.Fatalf("status = %+v", st)
	}
	if res := f.run(context.Background(), "mcp__old__echo", `{"text":"over sse"}`); text(res) != "echo: over sse" {
		t.Fatalf("echo = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if a != "Bearer s3cret" {
			t.Fatalf("a request carried Authorization %q; want the expanded header on every request", a)
		}
	}
}

func TestCloseRemovesToolsAndStopsProcesses(t *testing.T) {
	state := t.TempDir()
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("a", "ok", state), stdioServer("b", "ok", state)}})
	f.until(t, "a", mcp.StateReady)
	f.until(t, "b", mcp.StateReady)
	pids := mcptest.Pids(state)
	if err := f.mgr.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(names(f.reg)); n != 0 {
		t.Fatalf("%d tools left after Close", n)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("server process %d outlived Close", pid)
		}
	}
	res := f.run(context.Background(), "mcp__a__echo", `{"text":"x"}`)
	if !res.IsError {
		t.Fatal("a closed server's tool still runs")
	}
}

// lineWriter hands each write to the test as it happens.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestProgressReachesTheCallsLiveOutput(t *testing.T) {
	state := t.TempDir()
	f := start(t, mcp.Options{Servers: []mcp.Server{stdioServer("test", "ok", state)}})
	f.until(t, "test", mcp.StateReady)
	live := make(lineWriter, 4)
	ctx, cancel := context.WithCancel(tools.WithLiveOutput(context.Background(), live))
	done := make(chan tools.Result, 1)
	go func() { done <- f.run(ctx, "mcp__test__hang", `{}`) }()
	select {
	case line := <-live:
		if line != "progress 1/4 waiting\n" {
			t.Errorf("live output = %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server's progress notification never reached the live output")
	}
	cancel()
	<-done
}
