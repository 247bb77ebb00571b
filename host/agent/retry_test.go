package agent

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func failWith(err error, cs ...llm.Chunk) script {
	return func(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
		if err := chunks(cs...)(ctx, req, yield); err != nil {
			return err
		}
		return err
	}
}

func TestEmptyResponseIsRetriedInTheSameStep(t *testing.T) {
	p := newFakeProvider(t, chunks(usage(3, 0), finish(llm.FinishStop)), textReply("second try"))
	h := newHarness(t, p)
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "llm/retry", "llm/retry-started", "assistant/chunk*", "assistant/message", "step/end", "turn/end")

	chunkEvs := ofType(ev, session.TypeAssistantChunk)
	failed := decode[session.AssistantChunk](t, chunkEvs[1])
	if string(failed.Chunk) != `{"type":"finish","kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}` {
		t.Errorf("degenerate stop logged as %s", failed.Chunk)
	}
	retry := ofType(ev, session.TypeLLMRetry)[0]
	policy := `["normal",5,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0.1]`
	wantRetry := `{"retryId":"id-3","turn":1,"step":1,"provider":"fake","mode":"normal","policyKey":` + string(session.MustMarshal(policy)) +
		`,"failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"},"delayMs":500,"retry":1,"maxRetries":5}`
	if string(retry.Data) != wantRetry {
		t.Errorf("llm/retry\n got %s\nwant %s", retry.Data, wantRetry)
	}
	if got := string(ofType(ev, session.TypeLLMRetryStart)[0].Data); got != `{"retryId":"id-3","turn":1,"step":1,"retry":1}` {
		t.Errorf("llm/retry-started = %s", got)
	}
	if !slices.Equal(h.sleeps, []time.Duration{500 * time.Millisecond}) {
		t.Errorf("sleeps = %v", h.sleeps)
	}
	// Only the successful attempt's chunks back the message.
	msg := ofType(ev, session.TypeAssistantMessage)[0]
	var second []int
	for _, e := range chunkEvs[2:] {
		second = append(second, e.Seq)
	}
	if !slices.Equal(sources(t, msg), second) {
		t.Errorf("sources = %v, want %v", sources(t, msg), second)
	}
	if len(ofType(ev, session.TypeRequestHeader)) != 1 || len(p.requests()) != 2 {
		t.Errorf("retry wrote a header or made %d requests", len(p.requests()))
	}
	h.checkLog()
}

func TestNonRetryableProviderErrorEndsTheTurnWithItsFailure(t *testing.T) {
	p := newFakeProvider(t, failWith(&llm.Error{Failure: session.Failure{Code: llm.CodeAuth, Message: "invalid api key", Status: 401, RequestID: "req-9"}}))
	h := newHarness(t, p)
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "step/end", "turn/end")
	c := decode[session.AssistantChunk](t, ofType(ev, session.TypeAssistantChunk)[0])
	if string(c.Chunk) != `{"type":"finish","kind":"error","failure":{"message":"invalid api key","code":"AUTH","status":401,"requestId":"req-9"}}` {
		t.Errorf("error chunk = %s", c.Chunk)
	}
	if got := string(ev[len(ev)-1].Data); got != `{"turn":1,"reason":{"kind":"error","error":{"message":"invalid api key","code":"AUTH","status":401,"requestId":"req-9"}}}` {
		t.Errorf("turn/end = %s", got)
	}
	h.checkLog()
}

func TestRetriesStopAfterMaxRetries(t *testing.T) {
	server := func() script {
		return failWith(llm.Failf(llm.CodeServer, "overloaded"), textChunks(0, "par")...)
	}
	p := newFakeProvider(t, server(), server(), server())
	policy := llm.DefaultRetryPolicy()
	policy.MaxRetries = 2
	h := newHarness(t, p, withOptions(func(o *Options) { o.Retry = policy }))
	h.prompt("go")
	ev := h.events()
	retries := ofType(ev, session.TypeLLMRetry)
	if len(retries) != 2 || len(ofType(ev, session.TypeAssistantMessage)) != 0 {
		t.Fatalf("%d retries\n%s", len(retries), dump(ev))
	}
	first, second := decode[session.LLMRetry](t, retries[0]), decode[session.LLMRetry](t, retries[1])
	if first.RetryID != second.RetryID || first.Retry != 1 || second.Retry != 2 || second.DelayMs != 1000 {
		t.Errorf("retries = %+v, %+v", first, second)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndError || r.Error.Code != llm.CodeServer {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestProviderRetryAfterReplacesBackoff(t *testing.T) {
	f := &llm.Error{Failure: session.Failure{Code: llm.CodeRateLimit, Message: "slow down", Status: 429, ProviderRetryAfterMs: 1500}}
	p := newFakeProvider(t, failWith(f), textReply("ok"))
	h := newHarness(t, p)
	h.prompt("go")
	if !slices.Equal(h.sleeps, []time.Duration{1500 * time.Millisecond}) {
		t.Errorf("sleeps = %v", h.sleeps)
	}
	if r := decode[session.LLMRetry](t, ofType(h.events(), session.TypeLLMRetry)[0]); r.DelayMs != 1500 {
		t.Errorf("delayMs = %d", r.DelayMs)
	}
}

func TestCancelDuringRetryWaitAbortsTheTurn(t *testing.T) {
	p := newFakeProvider(t, failWith(llm.Failf(llm.CodeTimeout, "timed out")))
	waiting := make(chan struct{})
	h := newHarness(t, p, withOptions(func(o *Options) {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			close(waiting)
			<-ctx.Done()
			return ctx.Err()
		}
	}))
	h.agent.Followup(UserText("go", "p1"))
	<-waiting
	h.agent.Cancel(session.CancelCause{Kind: CauseUser})
	h.idle()
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "llm/retry", "step/end", "turn/end")
	if r := lastTurnEnd(t, ev); r.Kind != session.EndAborted {
		t.Errorf("turn/end = %+v", r)
	}
}

func TestStreamWithoutFinishIsClosedAsStreamClosed(t *testing.T) {
	p := newFakeProvider(t, chunks(textChunks(0, "cut")...))
	h := newHarness(t, p)
	h.prompt("go")
	chunkEvs := ofType(h.events(), session.TypeAssistantChunk)
	last := decode[session.AssistantChunk](t, chunkEvs[len(chunkEvs)-1])
	if string(last.Chunk) != `{"type":"finish","kind":"error","failure":{"message":"the model stream ended without a finish","code":"STREAM_CLOSED"}}` {
		t.Errorf("closing chunk = %s", last.Chunk)
	}
	if r := lastTurnEnd(t, h.events()); r.Kind != session.EndError || r.Error.Code != llm.CodeStreamClosed {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestRetryRunsAFailedTurnAgainWithoutRepeatingItsPrompt(t *testing.T) {
	p := newFakeProvider(t, failWith(&llm.Error{Failure: session.Failure{Code: llm.CodeAuth, Message: "invalid api key"}}), textReply("recovered"))
	h := newHarness(t, p)
	if err := h.agent.Retry(); !errors.Is(err, ErrNothingToRetry) {
		t.Errorf("Retry before any turn = %v", err)
	}
	h.prompt("fix the bug")
	if r := lastTurnEnd(t, h.events()); r.Kind != session.EndError {
		t.Fatalf("the first turn did not fail: %+v", r)
	}
	if err := h.agent.Retry(); err != nil {
		t.Fatal(err)
	}
	h.idle()
	ev := h.events()
	if r := lastTurnEnd(t, ev); r.Kind != session.EndCompleted {
		t.Fatalf("the retried turn = %+v\n%s", r, dump(ev))
	}
	if n := len(ofType(ev, session.TypeUserMessage)); n != 1 {
		t.Errorf("%d user messages after the retry, want the prompt once\n%s", n, dump(ev))
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	count := func(req llm.Request) int {
		n := 0
		for _, m := range req.Messages {
			for _, b := range m.Content {
				if b.Type == session.BlockText && b.Text == "fix the bug" {
					n++
				}
			}
		}
		return n
	}
	if count(reqs[0]) != 1 || count(reqs[1]) != 1 {
		t.Errorf("the prompt was sent %d then %d times", count(reqs[0]), count(reqs[1]))
	}
	if err := h.agent.Retry(); !errors.Is(err, ErrNothingToRetry) {
		t.Errorf("Retry after a completed turn = %v", err)
	}
	h.checkLog()
}
