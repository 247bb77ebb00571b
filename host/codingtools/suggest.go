package codingtools

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// maxSuggestScan bounds the directory listing a not-found error inspects, so
// a typo in a huge directory stays cheap.
const maxSuggestScan = 2000

// notFound builds the error for a missing path, suggesting up to three
// siblings with a similar name.
func notFound(errName string, call *tools.Call, fsys *confine.FS, abs string) error {
	shown := display(call, abs)
	dir := filepath.Dir(abs)
	if fi, err := fsys.Stat(dir); err != nil || !fi.IsDir() {
		return failf(errName, CodeNotFound, "file not found: %s (the directory %s does not exist either; use glob to locate the file)", shown, display(call, dir))
	}
	if s := similarNames(fsys, dir, filepath.Base(abs)); len(s) > 0 {
		for i, name := range s {
			s[i] = display(call, filepath.Join(dir, name))
		}
		return failf(errName, CodeNotFound, "file not found: %s. Did you mean %s?", shown, strings.Join(s, ", "))
	}
	return failf(errName, CodeNotFound, "file not found: %s (use glob to locate the file)", shown)
}

// similarNames returns up to three entries of dir whose names are close to
// name: the same ignoring case, the same stem with another extension, or a
// small edit distance away.
func similarNames(fsys *confine.FS, dir, name string) []string {
	f, err := fsys.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxSuggestScan)
	type scored struct {
		name  string
		score int
	}
	lower := strings.ToLower(name)
	stem := strings.TrimSuffix(lower, filepath.Ext(lower))
	limit := max(1, len([]rune(name))/4)
	var hits []scored
	for _, n := range names {
		ln := strings.ToLower(n)
		switch {
		case ln == lower:
			hits = append(hits, scored{n, 0})
		case stem != "" && strings.TrimSuffix(ln, filepath.Ext(ln)) == stem:
			hits = append(hits, scored{n, 1})
		default:
			if d := editDistance(lower, ln, limit); d <= limit {
				hits = append(hits, scored{n, 1 + d})
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score < hits[j].score
		}
		return hits[i].name < hits[j].name
	})
	out := make([]string, 0, 3)
	for _, h := range hits {
		if len(out) == 3 {
			break
		}
		out = append(out, h.name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b in runes, or limit+1
// as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
