package sessionquery

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Fixed output texts (session-query.md §4.3-4.4).
const (
	noSessionMatches = "No prior session matches found."
	noEventMatches   = "No prior event matches found."
	capLine          = "Result cap reached. Narrow the query or add filters to find additional matches."
	titleSep         = " — "
	outsideParent    = "[outside workspace]"
	outsideBoundary  = "- [outside workspace boundary]"
	outsideSubtree   = "- [outside workspace subtree]"
	noSemanticText   = " | (no semantic text)"
)

// isoTime renders epoch milliseconds the way JavaScript's toISOString does:
// UTC with milliseconds, and a signed six-digit year outside 0000-9999.
func isoTime(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	rest := t.Format("-01-02T15:04:05.000Z")
	switch y := t.Year(); {
	case y >= 0 && y <= 9999:
		return fmt.Sprintf("%04d%s", y, rest)
	case y < 0:
		return fmt.Sprintf("-%06d%s", -y, rest)
	default:
		return fmt.Sprintf("+%06d%s", y, rest)
	}
}

func availability(r sq.SessionRecord) string {
	switch {
	case r.Live && r.Persisted:
		return "live, persisted"
	case r.Live:
		return "live"
	case r.Persisted:
		return "persisted"
	}
	return "unavailable"
}

func seqList(seqs []int) string {
	if len(seqs) == 0 {
		return "none"
	}
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ", ")
}

func eventLine(r sq.EventRecord) string {
	return fmt.Sprintf("seq %d | %s | %s | %s", r.Seq, r.Type, r.Surface, isoTime(r.Time))
}

func renderSessionSearch(hits []sq.SessionHit, capped bool, titles map[string]titleView, visibleParents map[string]bool) string {
	if len(hits) == 0 {
		return noSessionMatches
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session search results (%d):\n", len(hits))
	for i, h := range hits {
		parent := "root"
		if p := h.Header.ParentSession; p != nil {
			parent = outsideParent
			if visibleParents[*p] {
				parent = *p
			}
		}
		fmt.Fprintf(&b, "\n%d. Session %s%s%s\n", i+1, h.Header.ID, titleSep, titles[h.Header.ID])
		fmt.Fprintf(&b, "   Created: %s\n", isoTime(h.Header.CreatedAt))
		fmt.Fprintf(&b, "   Parent: %s\n", parent)
		fmt.Fprintf(&b, "   Availability: %s\n", availability(h.SessionRecord))
		fmt.Fprintf(&b, "   Best match: %s\n", eventLine(h.BestMatch.EventRecord))
		fmt.Fprintf(&b, "   Snippet: %s\n", h.BestMatch.Snippet)
	}
	if capped {
		b.WriteString("\n" + capLine + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func renderEventSearch(target string, title titleView, hits []sq.EventHit, capped bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s%s%s\n\n", target, titleSep, title)
	if len(hits) == 0 {
		b.WriteString(noEventMatches)
		return b.String()
	}
	fmt.Fprintf(&b, "Event search results (%d):", len(hits))
	for i, h := range hits {
		fmt.Fprintf(&b, "\n%d. %s\n   Snippet: %s", i+1, eventLine(h.EventRecord), h.Snippet)
	}
	if capped {
		b.WriteString("\n\n" + capLine)
	}
	return b.String()
}

func sessionEntry(r sq.SessionRecord, titles map[string]titleView) string {
	return fmt.Sprintf("%s%s%s | %s | %s", r.Header.ID, titleSep, titles[r.Header.ID], isoTime(r.Header.CreatedAt), availability(r))
}

func renderLineage(target sq.SessionRecord, v visibleLineage, titles map[string]titleView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s%s%s\n", target.Header.ID, titleSep, titles[target.Header.ID])
	fmt.Fprintf(&b, "Created: %s\n", isoTime(target.Header.CreatedAt))
	fmt.Fprintf(&b, "Availability: %s\n", availability(target))
	b.WriteString("\nAncestors (nearest first):")
	for _, a := range v.ancestors {
		b.WriteString("\n- " + sessionEntry(a, titles))
	}
	switch {
	case v.boundary:
		b.WriteString("\n" + outsideBoundary)
	case len(v.ancestors) == 0:
		b.WriteString("\n- none (target is a root session)")
	}
	b.WriteString("\n\nDescendants:")
	if len(v.descendants) == 0 {
		b.WriteString("\n- none")
	}
	// A deep chain's output is dominated by its indentation: size the
	// buffer once and slice every indent from one string.
	deepest, size := 0, 0
	for _, d := range v.descendants {
		deepest = max(deepest, d.depth)
		size += 2*d.depth + 96
	}
	b.Grow(size)
	indent := strings.Repeat("  ", deepest)
	for _, d := range v.descendants {
		b.WriteByte('\n')
		b.WriteString(indent[:2*d.depth])
		if d.record == nil {
			b.WriteString(outsideSubtree)
			continue
		}
		b.WriteString("- " + sessionEntry(*d.record, titles))
	}
	return b.String()
}

func renderEventTrace(target string, title titleView, tr sq.EventTrace) string {
	replacedBy := "none"
	if tr.ReplacedBy != nil {
		replacedBy = strconv.Itoa(*tr.ReplacedBy)
	}
	return strings.Join([]string{
		fmt.Sprintf("Session %s%s%s", target, titleSep, title),
		"Target: " + eventLine(tr.Target),
		"Replaced by: " + replacedBy,
		"Replacement chain: " + seqList(tr.ReplacementChain),
		"Events replaced by target: " + seqList(tr.ReplacedEventSeqs),
		"Events cited directly as sources: " + seqList(tr.SourceEventSeqs),
		"Direct derived events: " + seqList(tr.DerivedEventSeqs),
	}, "\n")
}

// renderEventRead shows the target event exactly as stored: its log line,
// re-indented without reordering keys or re-escaping strings, never
// abridged. Oversized output is a spill policy's business, not the tool's.
func renderEventRead(target string, title titleView, w sq.EventWindow) (string, error) {
	line, err := w.Target.MarshalLine()
	if err != nil {
		return "", fmt.Errorf("encode event %d: %w", w.Target.Seq, err)
	}
	pretty, err := session.Indent(line)
	if err != nil {
		return "", fmt.Errorf("indent event %d: %w", w.Target.Seq, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s%s%s\n", target, titleSep, title)
	fmt.Fprintf(&b, "Target event seq %d:\n```json\n%s\n```", w.Target.Seq, pretty)
	var before, after []session.Event
	for _, e := range w.Events {
		switch {
		case e.Seq < w.Target.Seq:
			before = append(before, e)
		case e.Seq > w.Target.Seq:
			after = append(after, e)
		}
	}
	writeNeighbours(&b, "Before:", before)
	writeNeighbours(&b, "After:", after)
	return b.String(), nil
}

func writeNeighbours(b *strings.Builder, heading string, events []session.Event) {
	if len(events) == 0 {
		return
	}
	b.WriteString("\n\n" + heading)
	for _, e := range events {
		fmt.Fprintf(b, "\n- seq %d | %s | %s", e.Seq, e.Type, isoTime(e.Time))
		text := sq.ExtractText(e)
		if text == "" {
			b.WriteString(noSemanticText)
			continue
		}
		b.WriteString("\n  " + strings.ReplaceAll(text, "\n", "\n  "))
	}
}

// Call cards (front-end presentation of a pending call). They are pure:
// arguments that do not decode simply leave fields out.

func presentSearch(title string) func(*tools.Call) *tools.CallView {
	return func(c *tools.Call) *tools.CallView {
		v := &tools.CallView{Kind: tools.KindSearch, Title: title}
		if a, err := callArgs(c); err == nil {
			if q, ok, err := a.str("query"); err == nil && ok {
				v.RawInput = q
			}
		}
		return v
	}
}

func presentSessionTrace(c *tools.Call) *tools.CallView {
	v := &tools.CallView{Kind: tools.KindRead, Title: "Trace current session"}
	if a, err := callArgs(c); err == nil {
		if id, ok, err := a.str("session_id"); err == nil && ok {
			v.Title = "Trace session " + id
			v.RawInput = id
		}
	}
	return v
}

// eventRef is the raw input of the event cards: session_id only when given,
// and seq exactly as the model wrote it.
type eventRef struct {
	SessionID *string     `json:"session_id,omitempty"`
	Seq       json.Number `json:"seq"`
}

func presentEvent(verb string) func(*tools.Call) *tools.CallView {
	return func(c *tools.Call) *tools.CallView {
		v := &tools.CallView{Kind: tools.KindRead, Title: verb + " event"}
		a, err := callArgs(c)
		if err != nil {
			return v
		}
		seq, ok, err := a.number("seq")
		if err != nil || !ok {
			return v
		}
		if n, ok := nonNegativeSafe(seq); ok {
			// Shown as the model's runtime would print the number: 4.0
			// and 4e0 are both 4.
			seq = json.Number(strconv.Itoa(n))
		}
		id, _ := a.optStr("session_id")
		v.Title = verb + " event " + seq.String()
		v.RawInput = eventRef{SessionID: id, Seq: seq}
		return v
	}
}
