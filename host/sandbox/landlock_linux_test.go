//go:build linux

package sandbox

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestSupportNeverClaimsMoreThanTheABI(t *testing.T) {
	enforced, missing := features(3, false)
	if !slices.ContainsFunc(missing, func(s string) bool { return strings.Contains(s, "TCP") }) {
		t.Fatalf("ABI 3 must list TCP as not enforced: %v", missing)
	}
	if slices.ContainsFunc(enforced, func(s string) bool { return strings.Contains(s, "TCP") }) {
		t.Fatalf("ABI 3 claims TCP: %v", enforced)
	}
	if _, missing := features(7, true); len(missing) != 0 {
		t.Fatalf("ABI 7 with the socket filter misses %v", missing)
	}
	if _, missing := features(7, false); !slices.ContainsFunc(missing, func(s string) bool { return strings.Contains(s, "UDP") }) {
		t.Fatalf("without the socket filter UDP must be listed as not enforced: %v", missing)
	}
	for _, s := range []*landlockSandbox{{launcher: "", version: 7}, {launcher: "/bin/dsh", version: 0}} {
		sup := s.Support()
		if sup.Available || sup.Reason == "" {
			t.Fatalf("%+v: support %+v, want unavailable with a reason", s, sup)
		}
		if _, err := s.Start(exec.Command("true"), Policy{}); err == nil {
			t.Fatalf("%+v: Command succeeded without a sandbox", s)
		}
	}
}
