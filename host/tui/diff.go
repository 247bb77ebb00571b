package tui

import (
	"fmt"
	"strings"
)

// diffLine is one line of a rendered diff: op is ' ' (context), '-', '+'
// or '@' (a hunk header).
type diffLine struct {
	op   byte
	text string
}

// maxDiffCells bounds the LCS table; beyond it the changed middle is shown
// as a plain replacement, which is still correct, only less minimal.
const maxDiffCells = 1 << 22

// lineDiff returns the edit script turning a into b, line by line.
func lineDiff(a, b []string) []diffLine {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]diffLine, 0, len(a)+len(b))
	for _, s := range a[:pre] {
		out = append(out, diffLine{' ', s})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if n, m := len(ma), len(mb); n > 0 && m > 0 && (n+1)*(m+1) <= maxDiffCells {
		out = append(out, lcsDiff(ma, mb)...)
	} else {
		for _, s := range ma {
			out = append(out, diffLine{'-', s})
		}
		for _, s := range mb {
			out = append(out, diffLine{'+', s})
		}
	}
	for _, s := range a[len(a)-suf:] {
		out = append(out, diffLine{' ', s})
	}
	return out
}

// lcsDiff is the classic longest-common-subsequence diff; deletions come
// before insertions within a change.
func lcsDiff(a, b []string) []diffLine {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if a[i] == b[j] {
				v = at(i+1, j+1) + 1
			}
			l[i*(m+1)+j] = v
		}
	}
	out := make([]diffLine, 0, n+m)
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffLine{' ', a[i]})
			i++
			j++
		case at(i+1, j) >= at(i, j+1):
			out = append(out, diffLine{'-', a[i]})
			i++
		default:
			out = append(out, diffLine{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffLine{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffLine{'+', b[j]})
	}
	return out
}

// unifiedDiff renders the change from old to new as hunks with context
// lines around each change and "@@ -a,b +c,d @@" headers. Identical texts
// give no lines.
func unifiedDiff(old, new string, context int) []diffLine {
	a, b := diffSplit(old), diffSplit(new)
	ops := lineDiff(a, b)
	changed := false
	for _, d := range ops {
		if d.op != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return nil
	}
	var out []diffLine
	// Positions: aLine/bLine count lines consumed before ops[k].
	aPos := make([]int, len(ops)+1)
	bPos := make([]int, len(ops)+1)
	for k, d := range ops {
		aPos[k+1], bPos[k+1] = aPos[k], bPos[k]
		if d.op != '+' {
			aPos[k+1]++
		}
		if d.op != '-' {
			bPos[k+1]++
		}
	}
	for k := 0; k < len(ops); {
		if ops[k].op == ' ' {
			k++
			continue
		}
		start := max(0, k-context)
		end := k
		// Extend the hunk while changes are within 2*context of each other.
		for end < len(ops) {
			if ops[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].op == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(len(ops), end+context)
				break
			}
			end = run
		}
		aCount, bCount := aPos[end]-aPos[start], bPos[end]-bPos[start]
		out = append(out, diffLine{'@', fmt.Sprintf("@@ -%s +%s @@", hunkRange(aPos[start], aCount), hunkRange(bPos[start], bCount))})
		out = append(out, ops[start:end]...)
		k = end
	}
	return out
}

func hunkRange(pos, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", pos)
	}
	if count == 1 {
		return fmt.Sprint(pos + 1)
	}
	return fmt.Sprintf("%d,%d", pos+1, count)
}

// snippetDiff shows a replacement of old by new without hunk headers: the
// edit tool's arguments carry no line numbers.
func snippetDiff(old, new string) []diffLine {
	return lineDiff(diffSplit(old), diffSplit(new))
}

func diffSplit(s string) []string {
	if s == "" {
		return nil
	}
	return splitLines(s)
}

// diffText renders diff lines as text with their markers, for tests and
// plain output.
func diffText(lines []diffLine) string {
	var b strings.Builder
	for _, d := range lines {
		if d.op == '@' {
			b.WriteString(d.text)
		} else {
			b.WriteByte(d.op)
			b.WriteString(d.text)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
