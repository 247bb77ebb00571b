package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Rule checks one key's value and returns the problem, a phrase completing
// "config key K in S ..." such as "must be a positive integer (got 0)", or
// "" when the value is fine. v has the key's canonical type: string, int64
// for integer keys, float64 or bool.
type Rule func(v any) string

// MaxSafeInteger is the largest integer every config consumer handles
// exactly (JavaScript's Number.MAX_SAFE_INTEGER, which the session-query
// design's bounds inherit).
const MaxSafeInteger = 1<<53 - 1

// MaxTimerMs is the largest timer in milliseconds a key may set (the
// largest delay a JavaScript timer accepts, kept so one config means the
// same as upstream's).
const MaxTimerMs = math.MaxInt32

// OneOf accepts exactly the given strings.
func OneOf(allowed ...string) Rule {
	return func(v any) string {
		if slices.Contains(allowed, v.(string)) {
			return ""
		}
		quoted := make([]string, len(allowed))
		for i, a := range allowed {
			quoted[i] = fmt.Sprintf("%q", a)
		}
		return fmt.Sprintf("must be one of %s (got %q)", strings.Join(quoted, ", "), v)
	}
}

// IntAtLeast accepts integers of at least lo.
func IntAtLeast(lo int64) Rule {
	return func(v any) string {
		if n := v.(int64); n < lo {
			if lo == 1 {
				return fmt.Sprintf("must be a positive integer (got %d)", n)
			}
			return fmt.Sprintf("must be an integer of at least %d (got %d)", lo, n)
		}
		return ""
	}
}

// IntAtMost accepts integers of at most hi.
func IntAtMost(hi int64) Rule {
	return func(v any) string {
		if n := v.(int64); n > hi {
			return fmt.Sprintf("must be at most %d (got %d)", hi, n)
		}
		return ""
	}
}

// AllOf accepts what every one of rules accepts, reporting the first
// problem.
func AllOf(rules ...Rule) Rule {
	return func(v any) string {
		for _, r := range rules {
			if problem := r(v); problem != "" {
				return problem
			}
		}
		return ""
	}
}

// IntIn accepts integers from lo to hi.
func IntIn(lo, hi int64) Rule {
	return func(v any) string {
		if n := v.(int64); n < lo || n > hi {
			return fmt.Sprintf("must be an integer between %d and %d (got %d)", lo, hi, n)
		}
		return ""
	}
}

// FloatIn accepts (lo, hi], or [lo, hi] when closed is set. NaN fails both.
func FloatIn(lo, hi float64, closed bool) Rule {
	return func(v any) string {
		f := v.(float64)
		okLo := f > lo || (closed && f == lo)
		if okLo && f <= hi {
			return ""
		}
		if closed {
			return fmt.Sprintf("must be a number from %g to %g (got %g)", lo, hi, f)
		}
		return fmt.Sprintf("must be a number greater than %g and at most %g (got %g)", lo, hi, f)
	}
}

// holds reports whether the effective values of p hold.
func (p Pair) holds(low, high any) bool {
	switch l := low.(type) {
	case float64:
		h := high.(float64)
		return l < h || (!p.Strict && l == h)
	default:
		lo, hi := toInt64(low), toInt64(high)
		return lo < hi || (!p.Strict && lo == hi)
	}
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	}
	panic(fmt.Sprintf("config: %T is not an integer", v))
}
