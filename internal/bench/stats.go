package bench

import (
	"slices"
	"time"
)

// Percentiles returns the p50 and p95 of samples (nearest rank).
func Percentiles(samples []time.Duration) (p50, p95 time.Duration) {
	if len(samples) == 0 {
		return 0, 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return s[rank(len(s), 50)], s[rank(len(s), 95)]
}

func rank(n, p int) int {
	i := (p*n + 99) / 100
	return min(max(i-1, 0), n-1)
}

// Measure runs fn warmup times unmeasured, then n times, and returns the
// durations of the measured runs.
func Measure(warmup, n int, fn func() error) ([]time.Duration, error) {
	for range warmup {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}
