package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func ratio(a, b time.Duration) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

func printTable(w io.Writer, b *benchmark, res results) {
	fmt.Fprintf(w, "corpus: %d sessions, %d events, %d MB of JSONL (%s)\n\n", b.ci.sessions, b.events, b.ci.bytes>>20, b.ci.root)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	dshRate := float64(b.events) / b.build.Seconds()
	bareRate := float64(b.events) / b.bare.build.Seconds()
	fmt.Fprintf(tw, "index build\tdsh %.0f events/s (%s, %s CPU)\tbare FTS5 insert %.0f events/s (%s, %d docs)\tdsh ÷ bare %.2f×\n",
		dshRate, b.build.Round(time.Millisecond), b.buildCPU.Round(time.Millisecond), bareRate, b.bare.build.Round(time.Millisecond), b.bare.docs, dshRate/bareRate)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "query\tSearchSessions p50\tp95\tSearchEvents p50\tp95\tbare FTS5 p50\tdsh ÷ bare\trg -c -F p50\trg ÷ dsh\thits")
	for _, r := range res.rows {
		rg, rgRatio := ms(r.rgP50), ratio(r.rgP50, r.sessP50)
		if r.rg != "" {
			rg, rgRatio = r.rg, "-"
		}
		fmt.Fprintf(tw, "%s (%q)\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", r.q.name, r.q.text,
			ms(r.sessP50), ms(r.sessP95), ms(r.eventP50), ms(r.eventP95), ms(r.bareP50), ratio(r.sessP50, r.bareP50), rg, rgRatio, r.hits)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "no-change reconciliation p50\t%s\n", ms(res.noChange))
	fmt.Fprintf(tw, "reconciliation after +100 events p50\t%s\n", ms(res.afterAppend))
	fmt.Fprintf(tw, "peak RSS\t%d MB\n", res.maxRSSBytes>>20)
	tw.Flush()
}
