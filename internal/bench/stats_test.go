package bench

import (
	"testing"
	"time"
)

func TestPercentilesUseNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 100; i >= 1; i-- {
		s = append(s, time.Duration(i))
	}
	p50, p95 := Percentiles(s)
	if p50 != 50 || p95 != 95 {
		t.Errorf("p50 %d p95 %d, want 50 95", p50, p95)
	}
	if p50, p95 := Percentiles([]time.Duration{7}); p50 != 7 || p95 != 7 {
		t.Errorf("single sample: %d %d", p50, p95)
	}
	if p50, p95 := Percentiles(nil); p50 != 0 || p95 != 0 {
		t.Errorf("no samples: %d %d", p50, p95)
	}
}
