package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// warnUnknownEnv warns on stderr about DSH_* variables that set no config
// key (a typo such as DSH_LLM_MODLE would otherwise be ignored silently),
// naming the closest variable that does.
func warnUnknownEnv(w io.Writer, cfg *config.Config, environ []string) {
	known := map[string]bool{}
	var names []string
	for _, k := range cfg.Keys() {
		n := "DSH_" + strings.ToUpper(strings.ReplaceAll(k, ".", "_"))
		known[n] = true
		names = append(names, n)
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "DSH_") || known[name] {
			continue
		}
		msg := fmt.Sprintf("dsh: warning: the environment variable %s sets no config key and is ignored", name)
		if s, d := closest(name, names); d <= 3 {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		fmt.Fprintln(w, msg+"; dsh config show lists the keys")
	}
}

// closest is the name nearest to s by edit distance.
func closest(s string, names []string) (string, int) {
	best, bestD := "", -1
	for _, n := range names {
		if d := distance(s, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best, bestD
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
