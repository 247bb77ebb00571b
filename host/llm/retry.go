package llm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// RetryPolicy decides whether and when a failed model call is retried. It is
// pure data; the agent loop owns the waiting and the llm/retry events.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt.
	MaxRetries int
	// Codes are the failure codes eligible for a retry.
	Codes []string
	// InitialDelay is the local backoff before the first retry; each later
	// retry doubles it, capped at MaxDelay.
	InitialDelay time.Duration
	// MaxDelay caps local backoff and bounds an accepted provider Retry-After.
	MaxDelay time.Duration
	// Jitter spreads each local delay uniformly over ±Jitter of itself.
	Jitter float64
}

// RetryConfig is the llm.retry config section: a RetryPolicy's numbers as
// a user writes them. The composition declares the llm section around it
// (with the rules of these keys); configs/default.yaml holds their
// defaults, which DefaultRetryPolicy takes.
type RetryConfig struct {
	MaxRetries     int     `mapstructure:"max_retries"`
	InitialDelayMs int     `mapstructure:"initial_delay_ms"`
	MaxDelayMs     int     `mapstructure:"max_delay_ms"`
	Jitter         float64 `mapstructure:"jitter"`
}

// RetryPath is the config path of RetryConfig.
const RetryPath = "llm.retry"

// Policy is the policy retrying transient failures (not UNREACHABLE: a
// refused connection or unknown host stays refused) with c's numbers.
func (c RetryConfig) Policy() RetryPolicy {
	return RetryPolicy{
		MaxRetries:   c.MaxRetries,
		Codes:        []string{CodeEmptyResponse, CodeRateLimit, CodeServer, CodeTimeout, CodeTransport},
		InitialDelay: time.Duration(c.InitialDelayMs) * time.Millisecond,
		MaxDelay:     time.Duration(c.MaxDelayMs) * time.Millisecond,
		Jitter:       c.Jitter,
	}
}

// DefaultRetryPolicy is the Policy of llm.retry's built-in defaults in
// configs/default.yaml (exponential backoff with jitter). The package's
// tests rule out the panic.
func DefaultRetryPolicy() RetryPolicy {
	var c RetryConfig
	if err := config.SchemaOf[RetryConfig](RetryPath, nil).DecodeDefaults(&c); err != nil {
		panic(err)
	}
	return c.Policy()
}

// Validate reports a policy that cannot be executed, naming the field.
func (p RetryPolicy) Validate() error {
	var errs []error
	if p.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("max retries must not be negative, got %d", p.MaxRetries))
	}
	if p.InitialDelay <= 0 {
		errs = append(errs, fmt.Errorf("initial delay must be positive, got %s", p.InitialDelay))
	}
	if p.MaxDelay <= 0 {
		errs = append(errs, fmt.Errorf("max delay must be positive, got %s", p.MaxDelay))
	}
	if p.InitialDelay > p.MaxDelay && p.MaxDelay > 0 {
		errs = append(errs, fmt.Errorf("initial delay %s exceeds max delay %s", p.InitialDelay, p.MaxDelay))
	}
	if !(p.Jitter >= 0 && p.Jitter <= 1) {
		errs = append(errs, fmt.Errorf("jitter must be between 0 and 1, got %v", p.Jitter))
	}
	for i, c := range p.Codes {
		if c == "" {
			errs = append(errs, fmt.Errorf("retryable code %d is empty", i))
		} else if slices.Index(p.Codes, c) != i {
			errs = append(errs, fmt.Errorf("retryable code %s is listed twice", c))
		}
	}
	return errors.Join(errs...)
}

// Retryable reports whether failures with code are eligible at all.
func (p RetryPolicy) Retryable(code string) bool { return slices.Contains(p.Codes, code) }

// Delay returns how long to wait before retry number attempt (1 for the first
// retry) of a call that failed with f, and false when the call must not be
// retried: the code is not retryable, the retries are used up, or the
// provider asked for a Retry-After longer than MaxDelay (waiting less would
// only be refused again). A provider Retry-After within MaxDelay replaces the
// local backoff. rnd returns a sample in [0, 1); nil uses math/rand.
func (p RetryPolicy) Delay(attempt int, f session.Failure, rnd func() float64) (time.Duration, bool) {
	if attempt < 1 || attempt > p.MaxRetries || !p.Retryable(f.Code) {
		return 0, false
	}
	if f.ProviderRetryAfterMs > 0 {
		after := time.Duration(f.ProviderRetryAfterMs) * time.Millisecond
		if f.ProviderRetryAfterMs > int64(math.MaxInt64/time.Millisecond) || after > p.MaxDelay {
			return 0, false
		}
		return after, true
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	exp := float64(p.InitialDelay) * math.Pow(2, float64(min(attempt-1, 62)))
	exp = math.Min(exp, float64(p.MaxDelay))
	d := exp * (1 - p.Jitter + 2*p.Jitter*rnd())
	return time.Duration(math.Min(d, float64(p.MaxDelay))), true
}
