package llm

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func fixed(v float64) func() float64 { return func() float64 { return v } }

// TestDefaultRetryPolicyMatchesSpec pins the spec's policy, which
// DefaultRetryPolicy reads from configs/default.yaml's llm.retry.
func TestDefaultRetryPolicyMatchesSpec(t *testing.T) {
	p := DefaultRetryPolicy()
	if p.MaxRetries != 5 || p.InitialDelay != 500*time.Millisecond || p.MaxDelay != 10*time.Second || p.Jitter != 0.1 {
		t.Fatalf("default policy = %+v", p)
	}
	want := []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}
	if strings.Join(p.Codes, ",") != strings.Join(want, ",") {
		t.Fatalf("codes = %v, want %v", p.Codes, want)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("default policy invalid: %v", err)
	}
}

func TestRetryConfigPolicyTakesItsNumbers(t *testing.T) {
	p := RetryConfig{MaxRetries: 2, InitialDelayMs: 250, MaxDelayMs: 4000, Jitter: 0.5}.Policy()
	want := DefaultRetryPolicy()
	want.MaxRetries, want.InitialDelay, want.MaxDelay, want.Jitter = 2, 250*time.Millisecond, 4*time.Second, 0.5
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("Policy() = %+v, want %+v", p, want)
	}
}

func TestRetryDelay(t *testing.T) {
	p := DefaultRetryPolicy()
	server := session.Failure{Code: CodeServer, Message: "boom"}
	tests := []struct {
		name    string
		attempt int
		failure session.Failure
		rnd     float64
		want    time.Duration
		ok      bool
	}{
		{"first retry without jitter offset", 1, server, 0.5, 500 * time.Millisecond, true},
		{"second retry doubles", 2, server, 0.5, time.Second, true},
		{"fourth retry", 4, server, 0.5, 4 * time.Second, true},
		{"fifth retry capped at max delay", 5, server, 0.5, 8 * time.Second, true},
		{"jitter low end", 1, server, 0, 450 * time.Millisecond, true},
		{"jitter stretches delay", 5, server, 0.75, 8400 * time.Millisecond, true},
		{"retries exhausted", 6, server, 0.5, 0, false},
		{"attempt zero is invalid", 0, server, 0.5, 0, false},
		{"non-retryable code", 1, session.Failure{Code: CodeAuth}, 0.5, 0, false},
		{"retry-after within max replaces backoff", 1,
			session.Failure{Code: CodeRateLimit, ProviderRetryAfterMs: 7000}, 0.5, 7 * time.Second, true},
		{"retry-after equal to max is accepted", 3,
			session.Failure{Code: CodeRateLimit, ProviderRetryAfterMs: 10000}, 0.5, 10 * time.Second, true},
		{"retry-after beyond max refuses the retry", 1,
			session.Failure{Code: CodeRateLimit, ProviderRetryAfterMs: 10001}, 0.5, 0, false},
		{"absurd retry-after does not overflow", 1,
			session.Failure{Code: CodeRateLimit, ProviderRetryAfterMs: 1 << 62}, 0.5, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := p.Delay(tt.attempt, tt.failure, fixed(tt.rnd))
			if ok != tt.ok || got != tt.want {
				t.Fatalf("Delay(%d) = %v, %v; want %v, %v", tt.attempt, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRetryDelayClampsJitteredValueToMaxDelay(t *testing.T) {
	p := RetryPolicy{MaxRetries: 100, Codes: []string{CodeServer}, InitialDelay: time.Second, MaxDelay: 2 * time.Second, Jitter: 1}
	got, ok := p.Delay(50, session.Failure{Code: CodeServer}, fixed(0.99))
	if !ok || got != 2*time.Second {
		t.Fatalf("Delay = %v, %v; want max delay", got, ok)
	}
}

func TestRetryDelayWithoutRandomSourceStaysInJitterBand(t *testing.T) {
	p := DefaultRetryPolicy()
	for range 100 {
		got, ok := p.Delay(2, session.Failure{Code: CodeTimeout}, nil)
		if !ok || got < 900*time.Millisecond || got > 1100*time.Millisecond {
			t.Fatalf("Delay = %v, %v; want within 1s ± 10%%", got, ok)
		}
	}
}

func TestRetryPolicyValidateNamesEveryProblem(t *testing.T) {
	p := RetryPolicy{MaxRetries: -1, Codes: []string{"A", "", "A"}, InitialDelay: 0, MaxDelay: -1, Jitter: 2}
	err := p.Validate()
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"max retries", "initial delay", "max delay", "jitter", "code 1 is empty", "A is listed twice"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	p = RetryPolicy{InitialDelay: 2 * time.Second, MaxDelay: time.Second}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "exceeds max delay") {
		t.Fatalf("inverted delays: %v", err)
	}
}
