package sessionquery

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/plugins/timeout"
)

// runAsync starts one call and returns the channel its result arrives on.
func runAsync(ctx context.Context, h *harness, caller *session.Live, tool, args string) <-chan tools.Result {
	done := make(chan tools.Result, 1)
	go func() { done <- h.run(ctx, caller, tool, args) }()
	return done
}

// cancelWhileBlocked cancels the call once the service is parked in b,
// proves (inside the synctest bubble) that the result is not delivered
// while the started service call is still running, then releases it and
// returns the result.
func cancelWhileBlocked(t *testing.T, cancel context.CancelCauseFunc, b *blocker, done <-chan tools.Result) tools.Result {
	t.Helper()
	<-b.entered
	cancel(cancelCause)
	<-b.ctxDone
	synctest.Wait()
	select {
	case r := <-done:
		t.Fatalf("result delivered before the service call settled: %+v", r)
	default:
	}
	close(b.release)
	return <-done
}

func TestCancellingParentPreauthorizationWaitsAndReturnsTheReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBlocker()
		f := newFake(t)
		f.filterSessions = func(ctx context.Context, _ []sq.SessionFilter) ([]sq.SessionRecord, error) {
			b.wait(ctx)
			return nil, sq.Errorf(sq.CodeSourceConflict, "late secret")
		}
		h := newHarness(t, f, DefaultConfig())
		ctx, cancel := context.WithCancelCause(context.Background())
		done := runAsync(ctx, h, callerLive("caller", workspace), ToolSessionSearch, `{"query":"q","parent_session_ids":["p"]}`)
		res := cancelWhileBlocked(t, cancel, b, done)
		if !isCancelResult(res) {
			t.Fatalf("result = %+v", outcomeOf(t, res))
		}
		if h.log.count() != 0 || f.count("SearchSessions") != 0 {
			t.Fatalf("log %q, calls %v", h.log.text(), f.names())
		}
	})
}

func TestCancellingDirectTargetAuthorizationWaitsAndSkipsTheSearch(t *testing.T) {
	for _, tool := range []string{ToolEventSearch, ToolSessionTrace, ToolEventTrace, ToolEventRead} {
		synctest.Test(t, func(t *testing.T) {
			b := newBlocker()
			f := newFake(t)
			f.filterSessions = func(ctx context.Context, _ []sq.SessionFilter) ([]sq.SessionRecord, error) {
				b.wait(ctx)
				return []sq.SessionRecord{{Header: hdr("other", 2, workspace, "")}}, nil
			}
			h := newHarness(t, f, DefaultConfig())
			ctx, cancel := context.WithCancelCause(context.Background())
			done := runAsync(ctx, h, callerLive("caller", workspace), tool, `{"query":"q","session_id":"other","seq":0}`)
			res := cancelWhileBlocked(t, cancel, b, done)
			if !isCancelResult(res) {
				t.Fatalf("%s: result = %+v", tool, outcomeOf(t, res))
			}
			if got := f.names(); !slices.Equal(got, []string{"FilterSessions"}) || h.log.count() != 0 {
				t.Fatalf("%s: calls %v, log %q", tool, got, h.log.text())
			}
		})
	}
}

// sameContext asserts every recorded call got one and the same context.
func sameContext(t *testing.T, f *fakeService) context.Context {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("no calls recorded")
	}
	first := f.calls[0].ctx
	for _, c := range f.calls[1:] {
		if c.ctx != first {
			t.Fatalf("%s got a different context than %s", c.name, f.calls[0].name)
		}
	}
	return first
}

func TestExactToolsUseOneContextAndAwaitTheServiceOnAbort(t *testing.T) {
	svc := realService(t, live(hdr("caller", 1, workspace, "")), relationships(), live(hdr("child", 20, workspace, "relationships")))
	for _, tc := range []struct {
		tool, args string
		block      func(f *fakeService, b *blocker)
	}{
		{ToolSessionTrace, `{"session_id":"relationships"}`, func(f *fakeService, b *blocker) {
			f.traceSession = func(ctx context.Context, id string) (sq.LineageTrace, error) {
				b.wait(ctx)
				return svc.TraceSession(context.Background(), id)
			}
		}},
		{ToolEventTrace, `{"session_id":"relationships","seq":0}`, func(f *fakeService, b *blocker) {
			f.traceEvent = func(ctx context.Context, id string, seq int) (sq.EventTraceObservation, error) {
				b.wait(ctx)
				return svc.TraceEvent(context.Background(), id, seq)
			}
		}},
		{ToolEventRead, `{"session_id":"relationships","seq":0,"after":1}`, func(f *fakeService, b *blocker) {
			f.readEvent = func(ctx context.Context, id string, seq int, before, after *int) (sq.EventWindow, error) {
				b.wait(ctx)
				return svc.ReadEvent(context.Background(), id, seq, before, after)
			}
		}},
	} {
		// Undisturbed: authorization, the read and the title batch share
		// one context.
		f := spy(t, svc)
		h := newHarness(t, f, DefaultConfig())
		if o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), tc.tool, tc.args)); o.IsError {
			t.Fatalf("%s: %s", tc.tool, o.Text)
		}
		if n := len(f.names()); n != 3 {
			t.Fatalf("%s: calls %v", tc.tool, f.names())
		}
		sameContext(t, f)

		synctest.Test(t, func(t *testing.T) {
			b := newBlocker()
			f := spy(t, svc)
			tc.block(f, b)
			h := newHarness(t, f, DefaultConfig())
			ctx, cancel := context.WithCancelCause(context.Background())
			res := cancelWhileBlocked(t, cancel, b, runAsync(ctx, h, callerLive("caller", workspace), tc.tool, tc.args))
			if !isCancelResult(res) || h.log.count() != 0 || f.count("ReadTitleSnapshots") != 0 {
				t.Fatalf("%s: result %+v, log %q, calls %v", tc.tool, outcomeOf(t, res), h.log.text(), f.names())
			}
			sameContext(t, f)
		})
	}
}

func TestAbortBeatsALineageTraceThatSettlesAfterIt(t *testing.T) {
	for name, settle := range map[string]func() (sq.LineageTrace, error){
		"resolves": func() (sq.LineageTrace, error) {
			target := sq.SessionRecord{Header: hdr("caller", 1, workspace, ""), Live: true}
			return sq.LineageTrace{Target: target, Complete: true, Root: &target}, nil
		},
		"rejects with hidden ids": func() (sq.LineageTrace, error) {
			return sq.LineageTrace{}, sq.Errorf(sq.CodeInvalidLineage, `session lineage contains a cycle at "cycle-secret"`)
		},
	} {
		synctest.Test(t, func(t *testing.T) {
			b := newBlocker()
			f := newFake(t)
			f.traceSession = func(ctx context.Context, _ string) (sq.LineageTrace, error) {
				b.wait(ctx)
				return settle()
			}
			h := newHarness(t, f, DefaultConfig())
			ctx, cancel := context.WithCancelCause(context.Background())
			res := cancelWhileBlocked(t, cancel, b, runAsync(ctx, h, callerLive("caller", workspace), ToolSessionTrace, `{}`))
			if !isCancelResult(res) || h.log.count() != 0 {
				t.Fatalf("%s: result %+v, log %q", name, outcomeOf(t, res), h.log.text())
			}
		})
	}
}

func TestAbortDuringTitleEnrichmentReturnsTheReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := exampleCorpus()
		hits := exampleHits(c)
		b := newBlocker()
		f := newFake(t).serve(c)
		f.searchSessions = sessionPages(t, sessionPage{[]sq.SessionHit{hits["a"], hits["b"]}, ""})
		f.readTitleSnapshots = func(ctx context.Context, ids []string) ([]sq.TitleResult, error) {
			b.wait(ctx)
			return []sq.TitleResult{rejected("a", errors.New("late")), rejected("b", errors.New("late"))}, nil
		}
		h := newHarness(t, f, DefaultConfig())
		ctx, cancel := context.WithCancelCause(context.Background())
		res := cancelWhileBlocked(t, cancel, b, runAsync(ctx, h, callerLive("caller", workspace), ToolSessionSearch, `{"query":"q"}`))
		if !isCancelResult(res) || h.log.count() != 0 {
			t.Fatalf("result %+v, log %q", outcomeOf(t, res), h.log.text())
		}
		mustNotContain(t, "output", outcomeOf(t, res).Text, "title unavailable")
		sameContext(t, f)
	})
}

func TestEverySearchPageGetsTheExecutionContextAndAbortIsNotLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := exampleCorpus()
		hits := exampleHits(c)
		b := newBlocker()
		f := newFake(t).serve(c)
		n := 0
		f.searchSessions = func(ctx context.Context, _ sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
			n++
			if n < 3 {
				return sq.SessionSearchPage{Items: []sq.SessionHit{hits["a"]}, NextCursor: strp("c" + string(rune('0'+n)))}, nil
			}
			b.wait(ctx)
			return sq.SessionSearchPage{}, sq.Errorf(sq.CodeAborted, "session-search aborted")
		}
		h := newHarness(t, f, DefaultConfig())
		ctx, cancel := context.WithCancelCause(context.Background())
		res := cancelWhileBlocked(t, cancel, b, runAsync(ctx, h, callerLive("caller", workspace), ToolSessionSearch, `{"query":"q","parent_session_ids":["b"]}`))
		if !isCancelResult(res) || h.log.count() != 0 {
			t.Fatalf("result %+v, log %q", outcomeOf(t, res), h.log.text())
		}
		if got := f.names(); !slices.Equal(got, []string{"FilterSessions", "SearchSessions", "SearchSessions", "SearchSessions"}) {
			t.Fatalf("calls = %v", got)
		}
		sameContext(t, f)
	})
}

// timeoutHarness mounts the real timeout policy around the tools.
func timeoutHarness(t *testing.T, f *fakeService) *harness {
	h := newHarness(t, f, Config{MaxSearchResults: 100, SearchTimeout: 1234 * time.Millisecond})
	remove := h.reg.Execute.Use(timeout.Middleware(h.reg.Get))
	t.Cleanup(remove)
	return h
}

func TestTimeoutPolicyDeadlineReachesEveryServiceCall(t *testing.T) {
	check := func(t *testing.T, f *fakeService, caller context.Context) {
		t.Helper()
		ctx := sameContext(t, f)
		if ctx == caller {
			t.Fatal("the service saw the caller's context, not the policy's deadline")
		}
		var reason *timeout.TimeoutReason
		if !errors.As(context.Cause(ctx), &reason) || reason.Code != "TOOL_TIMEOUT" || reason.Timeout != 1234*time.Millisecond {
			t.Fatalf("deadline cause = %v", context.Cause(ctx))
		}
	}
	// A stalled parent authorization.
	synctest.Test(t, func(t *testing.T) {
		b := newBlocker()
		f := newFake(t)
		f.filterSessions = func(ctx context.Context, _ []sq.SessionFilter) ([]sq.SessionRecord, error) {
			b.wait(ctx)
			return nil, nil
		}
		h := timeoutHarness(t, f)
		caller := context.Background()
		done := runAsync(caller, h, callerLive("caller", workspace), ToolSessionSearch, `{"query":"q","parent_session_ids":["p"]}`)
		<-b.ctxDone
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("timed-out result delivered before the service call settled")
		default:
		}
		close(b.release)
		expectError(t, <-done, "TOOL_TIMEOUT", "tool call timed out after 1234ms")
		check(t, f, caller)
		if h.log.count() != 0 {
			t.Fatalf("timeout was logged: %s", h.log.text())
		}
	})
	// Authorization answers; the search stalls on the same deadline.
	synctest.Test(t, func(t *testing.T) {
		c := exampleCorpus()
		b := newBlocker()
		f := newFake(t).serve(c)
		f.searchSessions = func(ctx context.Context, _ sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
			b.wait(ctx)
			return sq.SessionSearchPage{}, nil
		}
		h := timeoutHarness(t, f)
		caller := context.Background()
		done := runAsync(caller, h, callerLive("caller", workspace), ToolSessionSearch, `{"query":"q","parent_session_ids":["b"]}`)
		<-b.ctxDone
		close(b.release)
		expectError(t, <-done, "TOOL_TIMEOUT", "tool call timed out after 1234ms")
		if got := f.names(); !slices.Equal(got, []string{"FilterSessions", "SearchSessions"}) {
			t.Fatalf("calls = %v", got)
		}
		check(t, f, caller)
	})
}

func TestExactToolsAreNotTimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t)
		f.traceSession = func(ctx context.Context, _ string) (sq.LineageTrace, error) {
			// Fake time inside the bubble: an hour is far beyond the
			// search budget, and no deadline may fire before it.
			select {
			case <-ctx.Done():
				t.Error("the trace was given a deadline")
			case <-time.After(time.Hour):
			}
			target := sq.SessionRecord{Header: hdr("caller", 1, workspace, ""), Live: true}
			return sq.LineageTrace{Target: target, Complete: true, Root: &target}, nil
		}
		f.readTitleSnapshots = (&corpus{records: []sq.SessionRecord{{Header: hdr("caller", 1, workspace, "")}}}).readTitles
		h := timeoutHarness(t, f)
		if o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{}`)); o.IsError {
			t.Fatal(o.Text)
		}
	})
}
