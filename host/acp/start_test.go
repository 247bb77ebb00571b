package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// slowBuild is a Backend build that lasts until the test releases it (with
// a backend or an error) or its context ends.
type slowBuild struct {
	release chan func() (Backend, error)
	// cancelled receives the context's error when the build gave up.
	cancelled chan error
	// early, when set, is served to session/list (Early.ServeCatalog) as
	// the build starts; withdraw receives what withdraws it.
	early    Catalog
	withdraw chan func()
}

func newSlowBuild() *slowBuild {
	return &slowBuild{release: make(chan func() (Backend, error), 1), cancelled: make(chan error, 1), withdraw: make(chan func(), 1)}
}

func (sb *slowBuild) build(ctx context.Context, e Early) (Backend, error) {
	if sb.early != nil {
		sb.withdraw <- e.ServeCatalog(sb.early)
	}
	select {
	case result := <-sb.release:
		return result()
	case <-ctx.Done():
		sb.cancelled <- ctx.Err()
		return Backend{}, ctx.Err()
	}
}

// finish lets the build return b.
func (sb *slowBuild) finish(b Backend) {
	sb.release <- func() (Backend, error) { return b, nil }
}

// fail lets the build return err.
func (sb *slowBuild) fail(err error) {
	sb.release <- func() (Backend, error) { return Backend{}, err }
}

// The editor's initialize does not wait for dsh's start-up (config, index,
// plugins); a session request sent meanwhile waits for it and succeeds.
func TestInitializeIsAnsweredWhileTheBackendIsBuilt(t *testing.T) {
	w := newWorld(t)
	sb := newSlowBuild()
	h := start(t, w, func(su *setup) { su.opts.Backend = sb.build; su.opts.RemoteMCP = false })
	// The build is blocked until finish: an answer here cannot have
	// waited for it.
	if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := h.conn.NewSession(h.ctx, sdk.NewSessionRequest{Cwd: workspace(t), McpServers: []sdk.McpServer{}})
		created <- err
	}()
	sb.finish(backendOf(w))
	if err := <-created; err != nil {
		t.Fatalf("session/new sent during the build: %v", err)
	}
	if err := h.stop(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// A start-up that failed (a bad config, an index that cannot open) is the
// answer of every session request, and Serve's result once the input ends.
func TestSessionRequestsAnswerAFailedStart(t *testing.T) {
	w := newWorld(t)
	sb := newSlowBuild()
	h := start(t, w, func(su *setup) { su.opts.Backend = sb.build })
	sb.fail(errors.New("config: llm.provider: unknown provider \"nope\""))
	want := `Internal error: dsh could not start: config: llm.provider: unknown provider "nope" (fix it, then restart the agent)`
	_, err := h.conn.NewSession(h.ctx, sdk.NewSessionRequest{Cwd: workspace(t), McpServers: []sdk.McpServer{}})
	if re, ok := err.(*sdk.RequestError); !ok || re.Code != codeInternalError || re.Message != want {
		t.Errorf("session/new: %v, want -32603 %q", err, want)
	}
	_, err = h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{})
	if re, ok := err.(*sdk.RequestError); !ok || re.Message != want {
		t.Errorf("session/list: %v, want %q", err, want)
	}
	if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Errorf("initialize after the failed start: %v", err)
	}
	if err := h.stop(); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Errorf("Serve = %v, want the start-up error", err)
	}
}

// An editor that goes away while dsh starts does not wait for the start-up:
// the build's context ends, Serve returns nil, and the tools get their
// approver back.
func TestInputEndDuringTheBuildCancelsIt(t *testing.T) {
	w := newWorld(t)
	sb := newSlowBuild()
	before := w.tools.Approver()
	h := start(t, w, func(su *setup) { su.opts.Backend = sb.build })
	if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if err := h.stop(); err != nil { // fails the test if Serve does not return
		t.Fatalf("Serve = %v, want nil: the build was abandoned, not failed", err)
	}
	if err := <-sb.cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("build context ended with %v", err)
	}
	if w.tools.Approver() != before {
		t.Error("the approver was changed by a connection whose backend was never built")
	}
}

// A scripted client that writes its requests and closes its output at
// once gets every answer: the input's end does not cancel a build a
// request waits for.
func TestRequestsBeforeTheInputEndWaitForTheBuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		sb := newSlowBuild()
		lines := []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
			`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`,
		}
		out, frames := io.Pipe()
		served := make(chan error, 1)
		go func() {
			served <- Serve(t.Context(), strings.NewReader(strings.Join(lines, "\n")+"\n"), frames, Options{Backend: sb.build})
			_ = frames.Close()
		}()
		answers := make(chan map[string]any, len(lines))
		go func() {
			dec := json.NewDecoder(out)
			for {
				var f map[string]any
				if err := dec.Decode(&f); err != nil {
					close(answers)
					return
				}
				answers <- f
			}
		}()
		first := <-answers
		if first["id"] != float64(1) || first["result"] == nil {
			t.Fatalf("first frame %v, want the initialize answer", first)
		}
		// Everything now waits: the input has ended, session/list waits for
		// the build, the build for its release.
		synctest.Wait()
		select {
		case err := <-sb.cancelled:
			t.Fatalf("the input's end cancelled the build session/list waits for: %v", err)
		default:
		}
		sb.finish(backendOf(w))
		second := <-answers
		if second["id"] != float64(2) || second["result"] == nil {
			t.Errorf("session/list answered %v", second)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve = %v", err)
		}
	})
}

// A backend that lacks what the session requests need is a start-up
// failure, reported on those requests like any other.
func TestAnIncompleteBackendIsAFailedStart(t *testing.T) {
	w := newWorld(t)
	h := start(t, w, func(su *setup) {
		su.b.Catalog = nil
		su.opts.RemoteMCP = true
	})
	_, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{})
	for _, want := range []string{"Backend.Catalog is required", "Options.RemoteMCP needs Backend.MCP"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("session/list: %v, want %q", err, want)
		}
	}
	if err := h.stop(); err == nil {
		t.Error("Serve returned nil after a failed start")
	}
}

// A closed session of cwd in w's catalog, for listing.
func closedSession(t *testing.T, w *world, cwd string) sdk.SessionId {
	t.Helper()
	a, err := w.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	id := a.Session().ID()
	if err := w.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	return sdk.SessionId(id)
}

// session/list needs only the catalog: once the build serves it, the
// editor's history is answered while the rest (plugins, tools) is still
// being built; the other session requests keep waiting for the whole.
func TestSessionListIsAnsweredOnceTheBuildServesTheCatalog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		cwd := workspace(t)
		id := closedSession(t, w, cwd)
		sb := newSlowBuild()
		sb.early = w.query
		h := start(t, w, func(su *setup) { su.opts.Backend = sb.build; su.opts.RemoteMCP = false })
		if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
			t.Fatal(err)
		}
		<-sb.withdraw
		// The build is blocked until finish: this answer did not wait for it.
		page, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{Cwd: &cwd})
		if err != nil || len(page.Sessions) != 1 || page.Sessions[0].SessionId != id {
			t.Fatalf("session/list during the build = %+v, %v; want %s", page, err, id)
		}
		created := make(chan error, 1)
		go func() {
			_, err := h.conn.NewSession(h.ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
			created <- err
		}()
		synctest.Wait()
		select {
		case err := <-created:
			t.Fatalf("session/new answered before the build ended: %v", err)
		default:
		}
		sb.finish(backendOf(w))
		if err := <-created; err != nil {
			t.Fatalf("session/new after the build: %v", err)
		}
		if err := h.stop(); err != nil {
			t.Fatalf("Serve = %v", err)
		}
	})
}

// gatedCatalog is a Catalog whose listing waits for the test.
type gatedCatalog struct {
	Catalog
	entered chan struct{}
	release chan struct{}
}

func (g *gatedCatalog) ListSummaries(ctx context.Context, req sessionquery.SummaryRequest) (sessionquery.SummaryPage, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Catalog.ListSummaries(ctx, req)
}

// A build that fails withdraws the catalog it served before it closes it:
// withdrawing waits for the listing that uses it, and the lists after it
// wait for the build and answer its failure, as every session request does.
func TestAWithdrawnCatalogWaitsForItsListsThenListsAnswerTheBuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		gate := &gatedCatalog{Catalog: w.query, entered: make(chan struct{}), release: make(chan struct{})}
		sb := newSlowBuild()
		sb.early = gate
		h := start(t, w, func(su *setup) { su.opts.Backend = sb.build; su.opts.RemoteMCP = false })
		withdraw := <-sb.withdraw
		listed := make(chan error, 1)
		go func() {
			_, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{})
			listed <- err
		}()
		<-gate.entered
		withdrawn := make(chan struct{})
		go func() {
			withdraw()
			close(withdrawn)
		}()
		synctest.Wait()
		select {
		case <-withdrawn:
			t.Fatal("withdraw returned while a listing still used the catalog")
		default:
		}
		close(gate.release)
		if err := <-listed; err != nil {
			t.Fatalf("session/list that began before the withdrawal: %v", err)
		}
		<-withdrawn
		late := make(chan error, 1)
		go func() {
			_, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{})
			late <- err
		}()
		synctest.Wait()
		select {
		case err := <-late:
			t.Fatalf("session/list after the withdrawal answered before the build ended: %v", err)
		default:
		}
		sb.fail(errors.New("plugin coding-tools: tools.bash.timeout: not a duration"))
		want := "Internal error: dsh could not start: plugin coding-tools: tools.bash.timeout: not a duration (fix it, then restart the agent)"
		if re, ok := (<-late).(*sdk.RequestError); !ok || re.Message != want {
			t.Errorf("session/list after the failed build: %v, want %q", re, want)
		}
		if err := h.stop(); err == nil {
			t.Error("Serve returned nil after a failed build")
		}
	})
}
