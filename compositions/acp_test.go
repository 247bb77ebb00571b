package compositions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// rawEditor drives StartACP with raw lines, reading its frames one by one.
type rawEditor struct {
	t      *testing.T
	in     *io.PipeWriter
	frames *bufio.Scanner
	served chan error
}

func startRaw(t *testing.T, o ACPOptions) *rawEditor {
	t.Helper()
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	e := &rawEditor{t: t, in: toAgent, frames: bufio.NewScanner(fromAgent), served: make(chan error, 1)}
	go func() {
		e.served <- StartACP(context.Background(), agentIn, agentOut, o)
		_ = agentOut.Close()
	}()
	t.Cleanup(func() { _ = toAgent.Close() })
	return e
}

// ask sends line and returns the next frame that is not a session update.
func (e *rawEditor) ask(line string) string {
	e.t.Helper()
	if _, err := io.WriteString(e.in, line+"\n"); err != nil {
		e.t.Fatal(err)
	}
	for e.frames.Scan() {
		if f := e.frames.Text(); !strings.Contains(f, `"method":"session/update"`) {
			return f
		}
	}
	e.t.Fatalf("the agent's output ended: %v", e.frames.Err())
	return ""
}

// end closes the editor's side and returns what StartACP returned.
func (e *rawEditor) end() error {
	_ = e.in.Close()
	for e.frames.Scan() {
	}
	return <-e.served
}

const initializeFrame = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`

// dsh acp answers initialize before its runtime exists; what the
// connection logs goes to LogWriter until the runtime's own log takes
// over; the session requests use the runtime, which StartACP closes.
func TestStartACPAnswersBeforeTheRuntimeIsBuilt(t *testing.T) {
	cfg, cwd := loadConfig(t, "demo")
	var early, runtimeLog lockedLog
	release := make(chan struct{})
	var built *Runtime
	e := startRaw(t, ACPOptions{Version: "test", LogWriter: &early, Build: func(ctx context.Context, _ QueryHook) (*Runtime, error) {
		<-release
		rt, err := New(ctx, Options{Config: cfg, Kind: ACP, Log: slog.New(slog.NewTextHandler(&runtimeLog, nil))})
		built = rt
		return rt, err
	}})
	if f := e.ask(initializeFrame); !strings.Contains(f, `"agentInfo":{"name":"dsh","version":"test"}`) || !strings.Contains(f, `"http":true`) {
		t.Fatalf("initialize answered %s", f)
	}
	e.ask(`not json, before the runtime`)
	close(release)
	if f := e.ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, cwd)); !strings.Contains(f, `"sessionId"`) {
		t.Fatalf("session/new answered %s", f)
	}
	e.ask(`not json, after the runtime`)
	if err := e.end(); err != nil {
		t.Fatalf("StartACP = %v", err)
	}
	if got := early.String(); strings.Count(got, "frame that is not JSON") != 1 || !strings.Contains(got, "component=acp") {
		t.Errorf("early log = %q, want the first bad frame", got)
	}
	if got := runtimeLog.String(); strings.Count(got, "frame that is not JSON") != 1 || !strings.Contains(got, "component=acp") {
		t.Errorf("runtime log = %q, want the second bad frame", got)
	}
	if _, err := built.NewSession(t.Context(), cwd); err == nil {
		t.Error("the runtime StartACP built is still open")
	}
}

// A runtime that cannot be built (here: a bad config) answers every
// session request with why, and is StartACP's error once the input ends.
func TestStartACPReportsAFailedBuild(t *testing.T) {
	var early lockedLog
	e := startRaw(t, ACPOptions{Version: "test", LogWriter: &early, Build: func(context.Context, QueryHook) (*Runtime, error) {
		return nil, errors.New(`config: log.level "loud" is not a level`)
	}})
	e.ask(initializeFrame)
	f := e.ask(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`)
	if !strings.Contains(f, `dsh could not start: config: log.level \"loud\" is not a level`) {
		t.Errorf("session/list answered %s", f)
	}
	if err := e.end(); err == nil || !strings.Contains(err.Error(), "is not a level") {
		t.Errorf("StartACP = %v", err)
	}
	if !strings.Contains(early.String(), "dsh could not start") {
		t.Errorf("log = %q, want the failure", early.String())
	}
}

// A runtime of another kind is refused, and closed.
func TestStartACPNeedsAnACPRuntime(t *testing.T) {
	cfg, _ := loadConfig(t, "default")
	var built *Runtime
	e := startRaw(t, ACPOptions{Build: func(ctx context.Context, _ QueryHook) (*Runtime, error) {
		rt, err := New(ctx, Options{Config: cfg, Kind: Headless})
		built = rt
		return rt, err
	}})
	e.ask(initializeFrame)
	if f := e.ask(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`); !strings.Contains(f, "needs a runtime of kind acp") {
		t.Errorf("session/list answered %s", f)
	}
	if err := e.end(); err == nil {
		t.Error("StartACP accepted a headless runtime")
	}
	if _, err := built.NewSession(t.Context(), t.TempDir()); err == nil {
		t.Error("the refused runtime is still open")
	}
}

// lockedLog is a log destination written by several goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The runtime tells OnQuery of its session-query service before the
// plugins start, so dsh acp lists sessions while they do; the use is
// withdrawn before the service closes.
func TestOnQueryHearsOfAnOpenServiceAndWithdrawsBeforeItCloses(t *testing.T) {
	cfg, _ := loadConfig(t, "demo")
	var heard *sessionquery.Service
	var atHook, atWithdraw error
	withdrawn := 0
	rt, err := New(t.Context(), Options{Config: cfg, Kind: ACP, OnQuery: func(q *sessionquery.Service) func() {
		heard = q
		_, atHook = q.ListSummaries(t.Context(), sessionquery.SummaryRequest{})
		return func() {
			withdrawn++
			// Searching needs the index: it fails once the service closed.
			_, atWithdraw = q.SearchSessions(t.Context(), sessionquery.SessionSearchRequest{Query: "anything"})
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if heard == nil || heard != rt.Query {
		t.Fatalf("OnQuery heard of %p, want the runtime's service %p", heard, rt.Query)
	}
	if atHook != nil {
		t.Errorf("listing when OnQuery heard of the service: %v", atHook)
	}
	if withdrawn != 0 {
		t.Error("the use was withdrawn while the runtime is open")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if withdrawn != 1 || atWithdraw != nil {
		t.Errorf("withdrawn %d times, searching then: %v; want once, before the service closed", withdrawn, atWithdraw)
	}
	if _, err := heard.SearchSessions(t.Context(), sessionquery.SessionSearchRequest{Query: "anything"}); err == nil {
		t.Error("searching a closed service succeeds: the check above cannot tell the order")
	}
}

// dsh acp answers session/list as soon as the runtime's session-query
// service is open, while the plugins are still to start.
func TestStartACPListsSessionsBeforeThePluginsStart(t *testing.T) {
	cfg, cwd := loadConfig(t, "demo")
	release := make(chan struct{})
	e := startRaw(t, ACPOptions{Version: "test", Build: func(ctx context.Context, onQuery QueryHook) (*Runtime, error) {
		return New(ctx, Options{Config: cfg, Kind: ACP, OnQuery: func(q *sessionquery.Service) func() {
			withdraw := onQuery(q)
			<-release // the plugins start after this returns
			return withdraw
		}})
	}})
	e.ask(initializeFrame)
	if f := e.ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{"cwd":%q}}`, cwd)); !strings.Contains(f, `"result":{"sessions":[]}`) {
		t.Errorf("session/list during the build answered %s", f)
	}
	close(release)
	if f := e.ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, cwd)); !strings.Contains(f, `"sessionId"`) {
		t.Fatalf("session/new answered %s", f)
	}
	if err := e.end(); err != nil {
		t.Fatalf("StartACP = %v", err)
	}
}
