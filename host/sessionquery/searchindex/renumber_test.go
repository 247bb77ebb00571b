package searchindex

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// t0 is the time of seq 0 of the logs ev and texts build (seq i is at
// t0+i).
const t0 = 1_700_000_000_000

// storedDocs renders one persisted session's documents (in seq order) and
// the catalog columns an append maintains, with the session key masked
// off the rowids, so that an index built whole, which may number the
// session differently, stores exactly the same.
func (f *fixture) storedDocs(id string) []string {
	f.t.Helper()
	ctx := context.Background()
	if err := f.ix.begin(ctx); err != nil {
		f.t.Fatal(err)
	}
	defer f.ix.queue.release()
	var out []string
	var key, events, docs int64
	var timeMax sql.NullInt64
	if err := f.ix.db.conn.QueryRowContext(ctx, `SELECT session_key, event_count, doc_count, doc_time_max FROM persisted_sessions
		WHERE session_id = ?`, id).Scan(&key, &events, &docs, &timeMax); err != nil {
		f.t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("events %d, documents %d, latest %v", events, docs, timeMax))
	rows, err := f.ix.db.conn.QueryContext(ctx, `SELECT doc_id, seq, type, time, surface, codepoint_length, text FROM persisted_docs
		WHERE doc_id BETWEEN ? AND ? ORDER BY seq`, key<<docBits, key<<docBits|docMask)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc, seq, at, n int64
		var typ, surface, text string
		if err := rows.Scan(&doc, &seq, &typ, &at, &surface, &n, &text); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("seq %d: rowid %#x, %s at %d, %s, %d code points: %q", seq, doc&docMask, typ, at, surface, n, text))
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// wholeDocs is storedDocs of an index built whole from the same logs.
func (f *fixture) wholeDocs(id string) []string {
	f.t.Helper()
	var out []string
	f.withWholeIndex(func() { out = f.storedDocs(id) })
	return out
}

// checkLikeWhole fails the test unless session id's documents are stored
// exactly as an index built whole stores them.
func (f *fixture) checkLikeWhole(id string) {
	f.t.Helper()
	got, want := f.storedDocs(id), f.wholeDocs(id)
	if !slices.Equal(got, want) {
		f.t.Errorf("after the append:\n%s\nan index built whole:\n%s", lines(got), lines(want))
	}
	f.checkFTS()
}

func lines(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "\t" + s + "\n"
	}
	return out
}

// checkAppendedAlone fails the test unless the last catch-up read only
// what was appended to id (and, with events >= 0, that many events).
func checkAppendedAlone(t *testing.T, feed *countingFeed, id string, events int) {
	t.Helper()
	if _, _, inspects := feed.reset(); len(inspects) != 0 {
		t.Errorf("logs read whole: %v", inspects)
	}
	if got := feed.takeAppended(); !reflect.DeepEqual(got, []string{id}) {
		t.Errorf("appended reads %v, want [%s]", got, id)
	}
	if read := feed.takeAppendedEvents(); events >= 0 && read != events {
		t.Errorf("%d appended events read, want %d", read, events)
	}
}

// movedSeqs returns the seqs whose rowid differs between two docIDs.
func movedSeqs(before, after map[int]int64) []int {
	var moved []int
	for seq, id := range before {
		if after[seq] != id {
			moved = append(moved, seq)
		}
	}
	slices.Sort(moved)
	return moved
}

// An appended document older than the session's latest takes the place
// its (time, seq) order gives without a whole read: the documents it
// sorts before, and only those, are renumbered, and every row is the one
// an index built whole stores.
func TestAppendedDocumentsOlderThanTheLatestRenumberOnlyTheLaterOnes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		times []int64 // of the appended messages, after t0
		moved []int   // seqs of the earlier documents whose rowids change
	}{
		{"all later", []int64{10, 11}, nil},
		{"as old as the latest", []int64{5}, nil},
		{"between two", []int64{3}, []int{4, 5}},
		{"interleaved", []int64{4, 1, 9, 2}, []int{2, 3, 4, 5}},
		{"older than every one", []int64{-100, -200}, []int{0, 1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, feed := newFeedFixture(t)
			f.persist(hdr("a", 1), texts("needle zero", "needle one", "needle two", "needle three", "needle four", "needle five"))
			f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
			before := f.docIDs("a")
			feed.reset()
			feed.takeAppended()
			feed.takeAppendedEvents()

			f.appendEvents("a", func(next int) []session.Event {
				out := make([]session.Event, len(tc.times))
				for i, at := range tc.times {
					out[i] = sessiontest.Event(t0+at, next+i, session.TypeUserMessage, userMsg(fmt.Sprintf("needle appended%d", i)))
				}
				return out
			})
			p := f.sessions(sessionquery.SessionSearchRequest{Query: "appended0"})
			if len(p.Items) != 1 || p.Items[0].BestMatch.Seq != 6 {
				t.Fatalf("search for the appended word: %+v", p.Items)
			}
			checkAppendedAlone(t, feed, "a", len(tc.times))
			if moved := movedSeqs(before, f.docIDs("a")); !slices.Equal(moved, tc.moved) {
				t.Errorf("renumbered seqs %v, want %v", moved, tc.moved)
			}
			f.checkLikeWhole("a")
		})
	}
}

// Equal documents tie on score and length; the later time wins even when
// the later one in the log is appended with an earlier time.
func TestAppendedEventWithAnEarlierTimeKeepsTheTieBreak(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle same", "other words"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	feed.reset()
	feed.takeAppended()
	feed.takeAppendedEvents()

	f.appendEvents("a", func(next int) []session.Event {
		// Earlier than seq 0's time.
		return []session.Event{sessiontest.Event(t0-100_000_000_000, next, session.TypeUserMessage, userMsg("needle same"))}
	})
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle same"})
	if len(p.Items) != 1 {
		t.Fatalf("hits: %+v", p.Items)
	}
	if got := p.Items[0].BestMatch.Seq; got != 0 {
		t.Errorf("best match seq %d, want 0 (the later time)", got)
	}
	checkAppendedAlone(t, feed, "a", 1)
	f.checkLikeWhole("a")
}

// turnAt is a completed turn of 20 events whose prompt is text, the first
// at time at and each one a millisecond later, as another dsh process
// appends it.
func turnAt(next, turn int, at int64, text string) []session.Event {
	var out []session.Event
	add := func(typ string, data any) {
		out = append(out, sessiontest.Event(at+int64(len(out)), next+len(out), typ, data))
	}
	add(session.TypeTurnStart, session.TurnStart{Turn: turn})
	add(session.TypeUserMessage, userMsg(text))
	add(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: 0})
	for i := range 14 {
		add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: 0,
			Chunk: session.MustMarshal(map[string]string{"type": "text-delta", "text": fmt.Sprintf("word%d ", i)})})
	}
	a := assistantMsg("the answer to " + text)
	a.Turn = turn
	add(session.TypeAssistantMessage, a)
	add(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: 0})
	add(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
	return out
}

// The bench's case: another process appends a turn to a long session
// with its clock behind the end of the session's last turn (the turns
// overlap in time). Only the appended events are read, only the last
// turn's documents later than the new turn's start are renumbered, and
// the index is the one a whole read gives.
func TestAnOverlappingTurnAppendedToALongSessionReadsOnlyTheTurn(t *testing.T) {
	f, feed := newFeedFixture(t)
	const turns = 100
	var log []session.Event
	for turn := range turns {
		log = append(log, turnAt(len(log), turn+1, t0+int64(len(log)), fmt.Sprintf("prompt %d", turn))...)
	}
	f.persist(hdr("a", 1), log)
	f.sessions(sessionquery.SessionSearchRequest{Query: "prompt"})
	before := f.docIDs("a")
	feed.reset()
	feed.takeAppended()
	feed.takeAppendedEvents()

	// The last turn's assistant message is at t0+len(log)-3; the new
	// turn starts before it, after its prompt.
	last := log[len(log)-1].Time
	var turn []session.Event
	f.appendEvents("a", func(next int) []session.Event {
		turn = turnAt(next, turns+1, last-10, "overlapping question")
		return turn
	})
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "overlapping question"})
	if len(p.Items) != 1 {
		t.Fatalf("hits: %+v", p.Items)
	}
	checkAppendedAlone(t, feed, "a", len(turn))
	answer := len(log) - 3
	if moved := movedSeqs(before, f.docIDs("a")); !slices.Equal(moved, []int{answer}) {
		t.Errorf("renumbered seqs %v, want only the last answer's %d", moved, answer)
	}
	f.checkLikeWhole("a")
}

// Rounds of appends whose times wander around the session's latest, as a
// clock stepping back and forth makes them: each round reads only what
// was appended, and after each the index is the one a whole read gives.
func TestAppendsWithAWanderingClockMatchAWholeIndexEveryRound(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle zero", "needle one", "needle two"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	rng := rand.New(rand.NewPCG(15, 60))
	latest := int64(t0 + 2)
	for round := range 12 {
		feed.reset()
		feed.takeAppended()
		feed.takeAppendedEvents()
		n := 1 + rng.IntN(4)
		f.appendEvents("a", func(next int) []session.Event {
			out := make([]session.Event, n)
			for i := range out {
				at := latest - 6 + rng.Int64N(9)
				latest = max(latest, at)
				// Some texts repeat, so that equal documents tie.
				text := fmt.Sprintf("needle r%d word%d", round, rng.IntN(3))
				out[i] = sessiontest.Event(at, next+i, session.TypeUserMessage, userMsg(text))
			}
			return out
		})
		word := fmt.Sprintf("r%d", round)
		if p := f.sessions(sessionquery.SessionSearchRequest{Query: word}); len(p.Items) != 1 {
			t.Fatalf("round %d: hits for %s: %+v", round, word, p.Items)
		}
		checkAppendedAlone(t, feed, "a", n)
		f.checkLikeWhole("a")
		got := windowRanking(t, f, "needle", predicates{}, predicates{})
		var want []string
		f.withWholeIndex(func() { want = windowRanking(t, f, "needle", predicates{}, predicates{}) })
		if !slices.Equal(got, want) {
			t.Errorf("round %d: ranking %v, a whole index ranks %v", round, got, want)
		}
		if t.Failed() {
			return
		}
	}
}
