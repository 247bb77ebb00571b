package compositions

import (
	"net"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// providerTurn runs one prompt through a TUI runtime configured with set and
// returns how the turn ended and the retries it logged.
func providerTurn(t *testing.T, set ...string) (session.TurnEndReason, []session.LLMRetry) {
	t.Helper()
	cfg, cwd := loadConfig(t, "", append([]string{"llm.api_key=k"}, set...)...)
	rt := newRuntime(t, TUI, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, a, "hello")
	_, events := a.Session().Snapshot()
	var end session.TurnEndReason
	var retries []session.LLMRetry
	for _, e := range events {
		switch e.Type {
		case session.TypeTurnEnd:
			var d session.TurnEnd
			if err := e.DecodeData(&d); err != nil {
				t.Fatal(err)
			}
			end = d.Reason
		case session.TypeLLMRetry:
			var d session.LLMRetry
			if err := e.DecodeData(&d); err != nil {
				t.Fatal(err)
			}
			retries = append(retries, d)
		}
	}
	return end, retries
}

func TestAConnectionRefusedEndsTheTurnWithoutRetrying(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close()
	end, retries := providerTurn(t, "llm.base_url="+base)
	if end.Kind != "error" || end.Error == nil || end.Error.Code != llm.CodeUnreachable {
		t.Fatalf("turn ended %+v, want an UNREACHABLE error", end)
	}
	if len(retries) != 0 {
		t.Errorf("retried %d times: %+v", len(retries), retries)
	}
}

func TestAKeepAliveOnlyProviderEndsTheTurnWithinItsDeadline(t *testing.T) {
	// Every attempt stalls; each retry event names why.
	srv := fakellm.New(fakellm.Reply{KeepAlive: true}, fakellm.Reply{KeepAlive: true})
	defer srv.Close()
	end, retries := providerTurn(t, "llm.base_url="+srv.URL, "llm.keepalive_limit_ms=50",
		"llm.retry.max_retries=1", "llm.retry.initial_delay_ms=1", "llm.retry.max_delay_ms=1")
	const why = "DeepSeek stream stalled: no data for 50ms, only keep-alive comments"
	if end.Kind != "error" || end.Error == nil || end.Error.Code != llm.CodeTimeout || end.Error.Message != why {
		t.Fatalf("turn ended %+v, want the stall", end)
	}
	if len(retries) != 1 || retries[0].Failure.Message != why {
		t.Errorf("retries = %+v, want one naming the stall", retries)
	}
}
