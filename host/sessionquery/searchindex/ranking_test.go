package searchindex

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// impactWords is the vocabulary of the ranking corpus: a few words common
// enough to be tracked, identifiers in every spelling, CJK runs, and rare
// words (rareN) that stay untracked.
var impactWords = strings.Fields(`alpha alpha alpha beta beta gamma the the the the of delta
	parseSessionHeader parse_session_header ParseSessionHeader session header parse
	OpenAI openai open ai 请检查数据库连接 数据库 数据 库`)

// impactCorpus persists n sessions of random documents: repeated words,
// varied lengths, identical documents in different sessions (exact ties),
// two workspaces and spread creation times.
func impactCorpus(f *fixture, n int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0))
	doc := func() string {
		switch r.IntN(60) {
		case 0, 1, 2, 3, 4, 5:
			return "alpha beta" // the same short document in many sessions
		case 6:
			return "call alphaBeta" // an identifier whose whole form stays rare
		}
		words := make([]string, 1+r.IntN(14))
		for i := range words {
			if r.IntN(12) == 0 {
				words[i] = fmt.Sprintf("rare%d", r.IntN(40))
			} else {
				words[i] = impactWords[r.IntN(len(impactWords))]
			}
		}
		return strings.Join(words, " ")
	}
	for i := range n {
		h := hdr(fmt.Sprintf("s%03d", i), int64(r.IntN(20)))
		if i%4 == 0 {
			h.Cwd = session.Ptr("/other")
		}
		msgs := make([]string, 1+r.IntN(6))
		for k := range msgs {
			msgs[k] = doc()
		}
		f.persist(h, texts(msgs...))
	}
}

// pageAll pages through a sessions search and returns each hit as
// id#seq.
func pageAll(f *fixture, req sessionquery.SessionSearchRequest) []string {
	f.t.Helper()
	var got []string
	for {
		p := f.sessions(req)
		for _, it := range p.Items {
			got = append(got, fmt.Sprintf("%s#%d", it.Header.ID, it.BestMatch.Seq))
		}
		if p.NextCursor == nil {
			return got
		}
		req.Cursor = p.NextCursor
	}
}

// TestImpactRankingEqualsFTS5Ranking ranks queries of tracked terms,
// phrases of them, camel-case identifiers (two phrases), CJK words and
// mixes with rare words from the term summaries and compares every page
// with FTS5's ranking of the same index, with session filters and with
// live sessions (one shadowing a persisted one) ranked in between.
func TestImpactRankingEqualsFTS5Ranking(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 12
	impactCorpus(f, 150, 1)
	shadowed, err := f.st.Stat(context.Background(), "s007")
	if err != nil {
		t.Fatal(err)
	}
	f.live(shadowed.Header, texts("alpha alpha beta", "parseSessionHeader again", "the the the"))
	f.live(hdr("zlive", 5), texts("alpha beta", "数据库 open ai", "gamma"))
	queries := []string{"alpha", "the", "alpha beta", "beta alpha alpha", "the the", "parseSessionHeader", "SessionHeader",
		"session header", "OpenAI", "alphaBeta", "数据库", "数据", "alpha rare3", "rare7 the", "gamma delta"}
	filters := []struct {
		name string
		sf   []sessionquery.SessionFilter
	}{
		{"all", nil},
		{"cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(strp("/w"))}}},
		{"created-at", []sessionquery.SessionFilter{{Kind: "created-at", From: floatp(4), To: floatp(12)}}},
	}
	impact := 0
	// A recorded phrase beside others (an identifier's parts) is bounded
	// from its record read whole, or from its terms' summaries when the
	// record is too large (readAhead.wholeRecord).
	for _, whole := range []int64{f.ix.ahead.wholeRecord, -1} {
		f.ix.ahead.wholeRecord = whole
		for _, fl := range filters {
			for _, q := range queries {
				t.Run(fmt.Sprintf("%s/%s/whole-max-%d", fl.name, q, whole), func(t *testing.T) {
					req := sessionquery.SessionSearchRequest{Query: q, Limit: intp(7), SessionFilters: fl.sf}
					f.ix.ftsOnly, f.ix.ranked = false, nil
					got := pageAll(f, req)
					if _, ok := f.ix.ranked.persisted.(*impactRanking); ok {
						impact++
					}
					f.ix.ftsOnly, f.ix.ranked = true, nil
					want := pageAll(f, req)
					if len(want) == 0 && fl.sf == nil {
						t.Fatalf("%q matches nothing: the corpus does not exercise it", q)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("ranked from the summaries:\n%v\nby FTS5:\n%v", got, want)
					}
				})
			}
		}
	}
	if impact < 2*len(filters)*(len(queries)-3) {
		t.Errorf("only %d of %d searches were ranked from the summaries", impact, 2*len(filters)*len(queries))
	}
}

// TestProbesReadAheadWithinTheirBounds ranks phrases whose bounds tie
// across many sessions (the corpus's "alpha beta" documents) with the
// probes read ahead in one batch, in batches of two, and with room for
// none but the probe asked for, and compares every page with FTS5's.
func TestProbesReadAheadWithinTheirBounds(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 12
	impactCorpus(f, 150, 1)
	for _, bounds := range []struct{ batch, bytes int }{{256, 1 << 20}, {2, 1 << 20}, {256, 1}} {
		f.ix.ahead.probes, f.ix.ahead.probeBytes = bounds.batch, bounds.bytes
		for _, q := range []string{"alpha beta", "beta alpha alpha", "session header", "the the"} {
			req := sessionquery.SessionSearchRequest{Query: q, Limit: intp(5)}
			f.ix.ftsOnly, f.ix.ranked = false, nil
			got := pageAll(f, req)
			if _, ok := f.ix.ranked.persisted.(*impactRanking); !ok {
				t.Fatalf("%q was not ranked from the summaries", q)
			}
			f.ix.ftsOnly, f.ix.ranked = true, nil
			if want := pageAll(f, req); !reflect.DeepEqual(got, want) {
				t.Errorf("batch %d, %d bytes, %q: ranked from the summaries:\n%v\nby FTS5:\n%v", bounds.batch, bounds.bytes, q, got, want)
			}
		}
	}
}

// TestFrontierKeepsExactlyTheUnbeatenPoints checks addPoint against a
// brute-force Pareto frontier of random points.
func TestFrontierKeepsExactlyTheUnbeatenPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 0))
	for range 500 {
		var e termEntry
		var all []termPoint
		for i := range 1 + r.IntN(30) {
			p := termPoint{tf: int32(1 + r.IntN(6)), dl: int32(1 + r.IntN(12)), local: int64(r.IntN(50)*64 + i)}
			all = append(all, p)
			e.add(p)
		}
		var want []termPoint
		for _, p := range all {
			beaten := false
			for _, q := range all {
				if q.tf >= p.tf && q.dl <= p.dl && (q.tf != p.tf || q.dl != p.dl || q.local < p.local) {
					beaten = true
				}
			}
			if !beaten {
				want = append(want, p)
			}
		}
		slices.SortFunc(want, func(a, b termPoint) int { return int(b.tf) - int(a.tf) })
		if int(e.docs) != len(all) || !reflect.DeepEqual(e.points, want) {
			t.Fatalf("points %v\nkept %v (docs %d)\nwant %v (docs %d)", all, e.points, e.docs, want, len(all))
		}
	}
}

func TestBlocksRoundTrip(t *testing.T) {
	entries := []blockEntry{
		{key: 64, termEntry: termEntry{docs: 3, points: []termPoint{{tf: 9, dl: 400, local: 1 << 38}, {tf: 1, dl: 2, local: 7}}}},
		{key: 70, termEntry: termEntry{docs: 1, points: []termPoint{{tf: 1, dl: 1, local: 0}}}},
	}
	got, err := decodeEntries(encodeBlock(entries))
	if err != nil || !reflect.DeepEqual(got, entries) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	for _, bad := range [][]byte{{0x80}, {1, 1, 5, 1}, {1, 1, 1, 1, 1}} {
		if _, err := decodeEntries(bad); err == nil {
			t.Errorf("%x decoded without an error", bad)
		}
	}
}

// storedSummaries reads every tracked term's stored entries.
func storedSummaries(t *testing.T, f *fixture) map[string][]blockEntry {
	t.Helper()
	out := map[string][]blockEntry{}
	rows, err := f.ix.db.conn.QueryContext(context.Background(),
		`SELECT t.term, s.entries FROM term_sessions s JOIN tracked_terms t ON t.term_id = s.id >> 32 ORDER BY t.term, s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var buf []byte
		if err := rows.Scan(&term, &buf); err != nil {
			t.Fatal(err)
		}
		es, err := decodeEntries(buf)
		if err != nil {
			t.Fatal(err)
		}
		out[term] = append(out[term], es...)
	}
	return out
}

// rebuiltSummaries computes every tracked term's entries afresh from the
// FTS5 index, as a promotion does.
func rebuiltSummaries(t *testing.T, f *fixture) map[string][]blockEntry {
	t.Helper()
	ctx := context.Background()
	var terms []string
	rows, err := f.ix.db.conn.QueryContext(ctx, `SELECT term FROM tracked_terms ORDER BY term`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var term string
		if err := rows.Scan(&term); err != nil {
			t.Fatal(err)
		}
		terms = append(terms, term)
	}
	rows.Close()
	out := map[string][]blockEntry{}
	for _, term := range terms {
		es, err := termEntries(ctx, f.ix.db.conn, term)
		if err != nil {
			t.Fatal(err)
		}
		out[term] = es
	}
	return out
}

// checkSummaries compares the stored summaries with fresh ones.
func checkSummaries(t *testing.T, f *fixture, when string) {
	t.Helper()
	if err := f.ix.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.ix.queue.release()
	got, want := storedSummaries(t, f), rebuiltSummaries(t, f)
	if len(want) == 0 {
		t.Fatalf("%s: no term is tracked", when)
	}
	for term, w := range want {
		if !reflect.DeepEqual(got[term], w) {
			t.Errorf("%s: the summaries of %q are\n%v\nrebuilt they are\n%v", when, term, got[term], w)
		}
	}
	for term := range got {
		if _, ok := want[term]; !ok {
			t.Errorf("%s: summaries of untracked %q", when, term)
		}
	}
}

// TestTermSummariesFollowEveryWrite checks the stored summaries against
// ones rebuilt from FTS5 after a first build (terms promoted as they
// reach the threshold), appends by another writer, a log replaced behind
// dsh's back, a deleted log and a term promoted by the first search that
// needs it.
func TestTermSummariesFollowEveryWrite(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 12
	impactCorpus(f, 60, 3)
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	checkSummaries(t, f, "after the first build")

	ctx := context.Background()
	for _, id := range []string{"s003", "s010"} {
		f.appendTexts(id, later, "alpha alpha alpha the", "gamma parseSessionHeader", "alpha")
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	checkSummaries(t, f, "after appends")

	// An appended event older than the session's latest renumbers the
	// later documents (see renumberLater): their points move with them.
	f.appendTexts("s003", func(seq, i int) int64 { return 1_700_000_000_000 + int64(i) }, "alpha gamma gamma the the", "beta")
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	checkSummaries(t, f, "after an append older than the session's latest")

	f.removeLog("s020")
	f.persist(hdr("s900", 9), texts("zeta zeta alpha", "zeta"))
	if _, err := f.ix.Verify(ctx, nil); err != nil {
		t.Fatal(err)
	}
	checkSummaries(t, f, "after a delete and a new log")

	// zeta was written after the index was filled: the first search for
	// it, once it is common, tracks it.
	for i := range 12 {
		f.persist(hdr(fmt.Sprintf("z%02d", i), 9), texts("zeta the", "zeta"))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "zeta"})
	if _, ok := f.ix.ranked.persisted.(*impactRanking); !ok {
		t.Error("the search that tracked zeta was not ranked from its summaries")
	}
	checkSummaries(t, f, "after zeta was promoted")
	if err := f.ix.begin(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.ix.queue.release()
	if got := storedSummaries(t, f)["zeta"]; len(got) != 13 {
		t.Errorf("zeta has entries in %d sessions, want 13", len(got))
	}
}

// TestARebuildOfManyBatchesKeepsExactSummaries: a rebuild's transactions
// keep the term summary blocks they used for the next one (keptBlocks);
// the summaries it leaves, across batches that end in the middle of a
// block, and of a term promoted once blocks are kept, are those FTS5
// gives.
func TestARebuildOfManyBatchesKeepsExactSummaries(t *testing.T) {
	f := newFixture(t)
	// 12,000 documents, three batches (batchDocs) of ~130 sessions;
	// "alpha" is in every document and tracked in the first batch,
	// "omega" only from the 200th session on (past the first batch).
	const sessions = 400
	for i := range sessions {
		msgs := make([]string, 30)
		for k := range msgs {
			msgs[k] = fmt.Sprintf("alpha word%d", (i+k)%7)
			if i >= 200 && k%2 == 0 {
				msgs[k] += " omega"
			}
		}
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(msgs...))
	}
	stored := rebuiltAndChecked(t, f)
	if got := len(stored["alpha"]); got != sessions {
		t.Errorf("alpha has entries in %d sessions, want %d", got, sessions)
	}
	if got := len(stored["omega"]); got != sessions-200 {
		t.Errorf("omega has entries in %d sessions, want %d", got, sessions-200)
	}
}

// TestARebuildReadsAKeptBlockDroppedMeanwhile: batches of sessions of
// many documents are shorter than a block, so a term that skips a batch
// goes on filling a block its transactions dropped (keptBlocks), past
// the blocks its promotion wrote, which is then read again as stored.
func TestARebuildReadsAKeptBlockDroppedMeanwhile(t *testing.T) {
	f := newFixture(t)
	at := int64(0)
	add := func(id string, msgs []string) {
		f.persist(hdr(id, at), texts(msgs...))
		at++
	}
	// Sessions 0-69 (blocks 0 and 1): 2,100 documents holding alpha,
	// which the first batch promotes; it ends within sessions 70-129.
	for i := range 70 {
		add(fmt.Sprintf("a%03d", i), slices.Repeat([]string{"alpha beta"}, 30))
	}
	for i := range 60 {
		add(fmt.Sprintf("c%03d", i), slices.Repeat([]string{"gamma"}, 40))
	}
	// Sessions 130-159 (block 2), ~4 to a batch; alpha in every 10th.
	for i := range 30 {
		msgs := slices.Repeat([]string{"delta"}, 1000)
		if i%10 == 0 {
			msgs[0] = "alpha"
		}
		add(fmt.Sprintf("d%03d", i), msgs)
	}
	if got := len(rebuiltAndChecked(t, f)["alpha"]); got != 73 {
		t.Errorf("alpha has entries in %d sessions, want 73", got)
	}
}

// rebuiltAndChecked rebuilds the index, checks its summaries against
// FTS5 and returns them.
func rebuiltAndChecked(t *testing.T, f *fixture) map[string][]blockEntry {
	t.Helper()
	if err := f.ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	checkSummaries(t, f, "after the rebuild")
	if err := f.ix.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.ix.queue.release()
	return storedSummaries(t, f)
}

// appendTexts appends alternating user and assistant messages to id's log
// as another dsh writer would, each event timed by at (given its seq and
// its index among the appended).
func (f *fixture) appendTexts(id string, at func(seq, i int) int64, msgs ...string) {
	f.t.Helper()
	f.appendEvents(id, func(next int) []session.Event {
		events := texts(msgs...)
		for i := range events {
			events[i].Seq = next + i
			events[i].Time = at(next+i, i)
		}
		return events
	})
}

// later times an appended event as texts does: after every earlier one.
func later(seq, _ int) int64 { return 1_700_000_000_000 + int64(seq) }

// phraseStat is a recorded phrase's document count and its documents
// (in rowid order, with the phrase's frequency and their lengths) per
// session.
type phraseStat struct {
	DF       int64
	Sessions map[int64][]phraseHit
}

// phraseCounts returns every recorded phrase's stored counts and FTS5's.
func phraseCounts(t *testing.T, f *fixture) (stored, counted map[string]phraseStat) {
	t.Helper()
	ctx := context.Background()
	if err := f.ix.begin(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.ix.queue.release()
	stored, counted = map[string]phraseStat{}, map[string]phraseStat{}
	rows, err := f.ix.db.conn.QueryContext(ctx, `SELECT p.phrase, p.df, s.session_key, s.docs
		FROM phrase_stats p LEFT JOIN phrase_sessions s ON s.phrase_id = p.id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var key string
		var df int64
		var session sql.NullInt64
		var docs []byte
		if err := rows.Scan(&key, &df, &session, &docs); err != nil {
			t.Fatal(err)
		}
		st, ok := stored[key]
		if !ok {
			st = phraseStat{DF: df, Sessions: map[int64][]phraseHit{}}
			stored[key] = st
		}
		if session.Valid {
			if st.Sessions[session.Int64], err = decodeHits(docs, session.Int64, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows.Close()
	var orphans int
	if err := f.ix.db.conn.QueryRowContext(ctx, `SELECT count(*) FROM phrase_sessions WHERE phrase_id NOT IN (SELECT id FROM phrase_stats)`).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if orphans > 0 {
		t.Errorf("%d sessions are recorded for phrases no longer recorded", orphans)
	}
	for key := range stored {
		st := phraseStat{Sessions: map[int64][]phraseHit{}}
		rows, err := f.ix.db.conn.QueryContext(ctx, `SELECT rowid, text FROM persisted_docs WHERE doc_id IN
			(SELECT rowid FROM persisted_fts WHERE persisted_fts MATCH ?) ORDER BY doc_id`, quotePhrase(key))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var text string
			if err := rows.Scan(&id, &text); err != nil {
				t.Fatal(err)
			}
			toks := textTokens(nil, text)
			st.DF++
			st.Sessions[id>>docBits] = append(st.Sessions[id>>docBits], phraseHit{id: id, f: countPhrase(toks, strings.Fields(key)), dl: int32(len(toks))})
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		counted[key] = st
	}
	return stored, counted
}

// TestPhraseCountsFollowEveryWrite records the parts phrase of a
// camel-case query and checks its count and sessions against FTS5 after
// appends that add it, an append that renumbers, a log replaced behind
// dsh's back, a deleted log and a rebuild.
func TestPhraseCountsFollowEveryWrite(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 12
	impactCorpus(f, 60, 4)
	check := func(when string) {
		t.Helper()
		stored, counted := phraseCounts(t, f)
		if len(stored) == 0 {
			t.Fatalf("%s: no phrase is recorded", when)
		}
		if !reflect.DeepEqual(stored, counted) {
			t.Errorf("%s: recorded counts %v, FTS5 counts %v", when, stored, counted)
		}
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "parseSessionHeader"})
	f.sessions(sessionquery.SessionSearchRequest{Query: "OpenAI"})
	check("after the searches that recorded them")

	ctx := context.Background()
	f.appendTexts("s005", later, "parse session header twice parse_session_header", "open ai")
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	check("after an append")

	// Documents renumbered by an older append keep their session.
	f.appendTexts("s005", func(seq, i int) int64 { return 1_700_000_000_000 + int64(i) }, "open ai parse session header", "beta")
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	check("after an append older than the session's latest")

	for _, id := range []string{"s001", "s002"} {
		f.removeLog(id)
	}
	f.persist(hdr("s901", 9), texts("ParseSessionHeader and OpenAI", "parse session header"))
	if _, err := f.ix.Verify(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("after deleted and new logs")

	// A ranking that reads the recorded count equals FTS5's.
	req := sessionquery.SessionSearchRequest{Query: "parseSessionHeader", Limit: intp(5)}
	f.ix.ranked = nil
	got := pageAll(f, req)
	f.ix.ftsOnly, f.ix.ranked = true, nil
	want := pageAll(f, req)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ranked with the recorded count:\n%v\nby FTS5:\n%v", got, want)
	}
}

// TestPhraseRecordsAreBounded records more phrases than are kept: the
// oldest go first.
func TestPhraseRecordsAreBounded(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 2
	words := strings.Fields("red green blue cyan gray pink gold teal navy plum")
	var msgs []string
	for _, a := range words {
		for _, b := range words {
			msgs = append(msgs, a+" "+b)
		}
	}
	for i := range 3 {
		f.persist(hdr(fmt.Sprintf("c%d", i), int64(i)), texts(msgs...))
	}
	var queries []string
	for _, a := range words {
		for _, b := range words[1:] {
			if a != b {
				queries = append(queries, a+strings.ToUpper(b[:1])+b[1:])
			}
		}
	}
	for _, q := range queries[:maxPhrases+6] {
		f.sessions(sessionquery.SessionSearchRequest{Query: q})
	}
	stored, counted := phraseCounts(t, f)
	if len(stored) != maxPhrases || !reflect.DeepEqual(stored, counted) {
		t.Fatalf("%d phrases recorded (counts %v, FTS5 %v), want %d", len(stored), stored, counted, maxPhrases)
	}
	first := strings.Join(phraseTokens(searchtext.Query(queries[0])), " ")
	if _, ok := stored[first]; ok {
		t.Errorf("the oldest phrase %q is still recorded", first)
	}
}

// TestLongSessionsLeavePhrasesToFTS5: in sessions of hundreds of documents
// a phrase's best document is found faster by FTS5 scoring every match
// than by tokenizing each session's matches, so the summaries rank only
// one-term queries there, and queries whose every match is known (see
// scoreHits); either way the ranking is FTS5's.
func TestLongSessionsLeavePhrasesToFTS5(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 12
	r := rand.New(rand.NewPCG(5, 0))
	for i := range 4 {
		msgs := make([]string, refineDocsMax*3)
		for k := range msgs {
			msgs[k] = strings.Repeat("alpha beta ", 1+r.IntN(3)) + "parse session header " + impactWords[r.IntN(len(impactWords))]
		}
		if i == 2 {
			msgs = append(msgs, "call alphaBeta")
		}
		f.persist(hdr(fmt.Sprintf("long%d", i), int64(i)), texts(msgs...))
	}
	// alphaBeta's parts are recorded and its whole is rare: every match
	// is known, and no document is tokenized to rank it.
	for _, tt := range []struct {
		query  string
		impact bool
	}{{"alpha", true}, {"alpha beta", false}, {"parseSessionHeader", false}, {"alphaBeta", true}} {
		req := sessionquery.SessionSearchRequest{Query: tt.query, Limit: intp(2)}
		f.ix.ftsOnly, f.ix.ranked = false, nil
		got := pageAll(f, req)
		_, impact := f.ix.ranked.persisted.(*impactRanking)
		if impact != tt.impact {
			t.Errorf("%q ranked from the summaries: %v, want %v", tt.query, impact, tt.impact)
		}
		f.ix.ftsOnly, f.ix.ranked = true, nil
		if want := pageAll(f, req); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, FTS5 ranks %v", tt.query, got, want)
		}
	}
}

// TestARareMatchIsBestOnlyWhenNothingElseCanBeatIt: a camel-case
// identifier's session is made exact from its matches of the rare whole
// identifier when none of its other documents can beat them (rareBest).
// Session "a" holds the identifier once in a long document and its parts
// four times in a short one, which scores better although it lacks the
// rare whole: it must be found, as FTS5 finds it.
func TestARareMatchIsBestOnlyWhenNothingElseCanBeatIt(t *testing.T) {
	f := newFixture(t)
	f.ix.trackMin = 12
	long := "see alphaBeta " + strings.Repeat("and some other words ", 10)
	f.persist(hdr("a", 1), texts(long, "alpha beta alpha beta alpha beta alpha beta"))
	f.persist(hdr("b", 2), texts("call alphaBeta", "gamma"))
	for i := range 14 {
		f.persist(hdr(fmt.Sprintf("p%02d", i), int64(3+i)), texts("alpha beta", "gamma delta"))
	}
	for i := range 40 {
		f.persist(hdr(fmt.Sprintf("q%02d", i), int64(20+i)), texts("gamma delta epsilon", "delta", "gamma", "epsilon zeta"))
	}
	req := sessionquery.SessionSearchRequest{Query: "alphaBeta", Limit: intp(5)}
	f.ix.ftsOnly, f.ix.ranked = false, nil
	got := pageAll(f, req)
	if _, ok := f.ix.ranked.persisted.(*impactRanking); !ok {
		t.Fatal("alphaBeta was not ranked from the summaries")
	}
	f.ix.ftsOnly, f.ix.ranked = true, nil
	want := pageAll(f, req)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ranked from the summaries:\n%v\nby FTS5:\n%v", got, want)
	}
	if !slices.Contains(want, "a#1") {
		t.Errorf("FTS5 ranks %v: session a's best is not its parts-only document, the case this test is for", want)
	}
}

// TestARareWholeIsScoredFromTheVocabulary ranks an identifier whose whole
// is rare and whose parts phrase is recorded: the whole's matches, each
// with its own frequency and length, are read from the index's vocabulary
// and scored here (countedBounds), and they compete with documents
// holding the parts only. The bounds, matches and scores must be FTS5's
// own (rareBounds) to the last bit, and every page must equal FTS5's,
// everywhere and in one workspace.
func TestARareWholeIsScoredFromTheVocabulary(t *testing.T) {
	f := newTrackedPartsFixture(t)
	filler := strings.Fields("gamma delta epsilon zeta eta theta")
	for i := range 8 { // 10 documents hold the whole, fewer than trackMin
		whole := strings.Repeat("alphaBeta ", 1+i%3) + strings.Join(filler[:i%len(filler)], " ")
		parts := strings.Repeat("alpha beta ", 1+(i*7)%4) + strings.Join(filler[:(i*5)%len(filler)], " ")
		h := hdr(fmt.Sprintf("w%02d", i), int64(30+i))
		if i%3 == 0 {
			h.Cwd = session.Ptr("/other")
		}
		msgs := []string{whole, parts, "gamma"}
		if i%4 == 1 { // a second, weaker match of the whole
			msgs = append(msgs, "alphaBeta "+strings.Join(filler, " "))
		}
		f.persist(h, texts(msgs...))
	}
	for _, sf := range [][]sessionquery.SessionFilter{nil, {{Kind: "cwd", NullableValues: nullable(strp("/w"))}}} {
		req := sessionquery.SessionSearchRequest{Query: "alphaBeta", Limit: intp(3), SessionFilters: sf}
		f.ix.ftsOnly, f.ix.ranked = false, nil
		got := pageAll(f, req)
		r, ok := f.ix.ranked.persisted.(*impactRanking)
		if !ok || r.known == nil || !countedMatches(r.known) {
			t.Fatalf("filters %v: the rare whole's matches were not scored from the vocabulary", sf)
		}
		f.ix.ftsOnly, f.ix.ranked = true, nil
		if want := pageAll(f, req); !reflect.DeepEqual(got, want) {
			t.Errorf("filters %v: ranked from the summaries:\n%v\nby FTS5:\n%v", sf, got, want)
		}
	}
	ctx := context.Background()
	p, err := planImpact(ctx, f.ix.db, quoteFTS("alphaBeta"))
	if err != nil || p == nil {
		t.Fatalf("plan: %v, %v", p, err)
	}
	recs, err := phraseRecords(ctx, f.ix.db, p.phrases, nil, f.ix.ahead.wholeRecord)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range p.phrases {
		if ph.ids != nil {
			continue
		}
		gotMatches, gotScored := map[int64][]int64{}, map[int64][]rareHit{}
		got, gotDF, counted, err := p.countedBounds(ctx, f.ix.db, ph.tokens, recs, nil, gotMatches, gotScored)
		if err != nil || !counted {
			t.Fatalf("%s: counted %v, %v", ph.match, counted, err)
		}
		wantMatches, wantScored := map[int64][]int64{}, map[int64][]rareHit{}
		want, wantDF, err := rareBounds(ctx, f.ix.db, ph.match, nil, wantMatches, wantScored)
		if err != nil {
			t.Fatal(err)
		}
		stats := bm25Stats{rows: p.rows, tokens: p.tokens, hits: gotDF}
		for _, hits := range gotScored {
			for i, h := range hits {
				// The frequency and length scoreHits takes as known are
				// the ones FTS5's score of the match implies.
				if f, ok := exactFreq(h.score, h.dl, stats); !ok || f != h.f || h.dl == 0 {
					t.Errorf("%s: match %d has frequency %d and length %d; its score implies %d (%v)", ph.match, h.id, h.f, h.dl, f, ok)
				}
				hits[i].f, hits[i].dl = 0, 0 // FTS5 reports neither
			}
		}
		if gotDF != wantDF || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotMatches, wantMatches) || !reflect.DeepEqual(gotScored, wantScored) {
			t.Errorf("%s: counted df %d, bounds %v, scores %v;\nFTS5 df %d, bounds %v, scores %v", ph.match, gotDF, got, gotScored, wantDF, want, wantScored)
		}
	}
}

// countedMatches reports whether some rare phrase's matches carry their
// lengths, as countedBounds reads them.
func countedMatches(k *knownMatches) bool {
	for _, bySession := range k.rare {
		for _, hits := range bySession {
			for _, h := range hits {
				if h.dl > 0 {
					return true
				}
			}
		}
	}
	return false
}

// newTrackedPartsFixture is an index whose terms alpha and beta are
// tracked (14 sessions p00…p13 hold them, as the phrase "alpha beta"), so
// that the identifier alphaBeta is ranked from their summaries.
func newTrackedPartsFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.ix.trackMin = 12
	for i := range 14 {
		f.persist(hdr(fmt.Sprintf("p%02d", i), int64(i)), texts("alpha beta", "gamma"))
	}
	return f
}

// TestSessionsHoldingAPhrasesTermsApartAreNoCandidates ranks an
// identifier whose parts are tracked terms in one workspace: sessions
// holding the parts apart, never as the phrase, must not be candidates
// (such a search examines every candidate when fewer sessions match than
// it asks for), and the ranking still equals FTS5's, there and everywhere.
func TestSessionsHoldingAPhrasesTermsApartAreNoCandidates(t *testing.T) {
	f := newTrackedPartsFixture(t)
	for i := range 40 {
		f.persist(hdr(fmt.Sprintf("q%02d", i), int64(20+i)), texts("beta then alpha", "alpha gamma beta"))
	}
	f.persist(hdr("w", 70), texts("call alphaBeta"))
	for _, sf := range [][]sessionquery.SessionFilter{nil, {{Kind: "cwd", NullableValues: nullable(strp("/w"))}}} {
		req := sessionquery.SessionSearchRequest{Query: "alphaBeta", Limit: intp(4), SessionFilters: sf}
		f.ix.ftsOnly, f.ix.ranked = false, nil
		got := pageAll(f, req)
		f.ix.ftsOnly, f.ix.ranked = true, nil
		if want := pageAll(f, req); !reflect.DeepEqual(got, want) {
			t.Errorf("filters %v: ranked from the summaries:\n%v\nby FTS5:\n%v", sf, got, want)
		}
	}

	ctx := context.Background()
	if err := f.ix.begin(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.ix.queue.release()
	match := quoteFTS("alphaBeta")
	plan, err := planImpact(ctx, f.ix.db, match)
	if err != nil || plan == nil {
		t.Fatalf("plan = %v, %v: alphaBeta is not ranked from the summaries", plan, err)
	}
	sp, err := compileSessionPredicates([]sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(strp("/w"))}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := plan.rankImpact(ctx, f.ix.db, match, sp)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.cands); n != 15 {
		t.Errorf("%d candidate sessions in the workspace, want the 15 holding the phrase or the whole", n)
	}
}

// TestAMalformedPhraseRecordIsDamage corrupts a phrase record: the search
// that reads it fails as a damaged index would, says so once, and the next
// search is answered from an index rebuilt from the logs.
func TestAMalformedPhraseRecordIsDamage(t *testing.T) {
	f := newTrackedPartsFixture(t)
	f.persist(hdr("w", 70), texts("call alphaBeta"))
	req := sessionquery.SessionSearchRequest{Query: "alphaBeta", Limit: intp(100)}
	want := f.sessions(req)
	if r, ok := f.ix.ranked.persisted.(*impactRanking); !ok || r.known == nil {
		t.Fatal("alphaBeta was not ranked from its phrase's record")
	}
	if f.count(`SELECT count(*) FROM phrase_sessions`) == 0 {
		t.Fatal("no phrase is recorded")
	}
	f.exec(`UPDATE phrase_sessions SET docs = x'ff'`)
	f.takeNotices()
	f.ix.ranked = nil
	if _, err := f.ix.SearchSessions(context.Background(), req); err == nil || !strings.Contains(err.Error(), "malformed phrase document list") {
		t.Fatalf("the search over a malformed record returned %v", err)
	}
	if got := f.takeNotices(); len(got) != 1 || !strings.Contains(got[0], "is damaged (") {
		t.Errorf("notices = %q, want one saying the index is damaged", got)
	}
	if got := f.sessions(req); !reflect.DeepEqual(got.Items, want.Items) {
		t.Errorf("after the rebuild:\n%v\nbefore the damage:\n%v", got.Items, want.Items)
	}
}

// TestASummaryCutToAnOlderVocabulary checks when a summary cut to one
// vocabulary serves a transaction reading a later one: only if its
// documents hold none of the terms tracked since, and only if the later
// vocabulary extends the earlier one (an index rebuilt meanwhile numbers
// its terms afresh).
func TestASummaryCutToAnOlderVocabulary(t *testing.T) {
	vocab := func(version int64, terms ...string) *trackedTerms {
		v := &trackedTerms{version: version, ids: map[string]int64{}}
		for i, term := range terms {
			v.ids[term] = int64(i + 1)
			v.byID = append(v.byID, term)
		}
		return v
	}
	old := vocab(1, "alpha", "beta")
	now := vocab(3, "alpha", "beta", "gamma", "delta")
	rebuilt := vocab(3, "beta", "alpha", "gamma", "delta")
	rows := func(texts ...string) []docRow {
		var out []docRow
		for i, text := range texts {
			out = append(out, docRow{text: text, form: text, local: int64(i + 1)})
		}
		return out
	}
	tx := &termTx{tracked: now}
	for _, c := range []struct {
		docs  []docRow
		want  bool
		trust *termTx
	}{
		{rows("alpha beta", "zeta"), true, tx},
		{rows("alpha", "the delta"), false, tx},
		{rows("gamma"), false, tx},
		{rows("alpha beta"), false, &termTx{tracked: rebuilt}},
	} {
		st := summarize(c.docs, old, nil)
		if got := st.cutTo(c.trust.tracked, c.trust.extends); got != c.want {
			t.Errorf("%v cut to %v serves %v: %v, want %v", c.docs, old.byID, c.trust.tracked.byID, got, c.want)
		}
	}
	if st := summarize(rows("delta"), nil, nil); !st.cutTo(now, tx.extends) {
		t.Error("a summary of every term does not serve every vocabulary")
	}
}
