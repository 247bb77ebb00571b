package searchindex

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// Ranking from the term summaries.
//
// FTS5 scores every document that matches a query, and for bm25 it also
// counts them all first (for the phrases' idf) and reads every one's
// length: a query of common terms costs a pass over hundreds of
// thousands of documents. A query whose every phrase is made of tracked
// terms only (see trackMin), or mixes such phrases with rare ones, is
// ranked here instead, by the same bm25 computed the same way:
//
//   - each session gets an upper bound of its best document's score: for a
//     phrase of tracked terms, its idf times the weakest of its terms'
//     best frontier points (a document holding the phrase f times holds
//     each of its terms at least f times, and its length is its own); for
//     a rare phrase, FTS5's own scores of its few matches;
//   - sessions are taken by decreasing bound and their best document found
//     exactly: the query's matches within the session (FTS5, restricted
//     to the session's rowids) are tokenized here and scored, exactly as
//     FTS5 would. A one-term query needs no such step: the best frontier
//     point is the session's best document. Nor does a query whose every
//     phrase is rare or recorded (an identifier's parts and whole, see
//     phrases.go): each document's frequencies and length are known from
//     the records and the rare matches' scores (scoreHits);
//   - this stops once as many sessions as the pages asked for are exact
//     and the next bound is below the last of them, so every session not
//     looked at ranks after them.
//
// A query of one phrase is ranked by bm25 without the idf factor: every
// document shares that phrase's idf, so the order is the same and the
// phrase's documents need not be counted. A query of several phrases (a
// camel-case identifier, see quoteFTS) needs each phrase's idf: the
// document frequency of a single tracked term is the sum of its
// summaries' document counts, of a rare phrase the number of its matches,
// and of a phrase of several tracked terms an FTS5 count.

// impactPlan is how a sessions query is ranked from the summaries.
type impactPlan struct {
	phrases      []impactPhrase
	avgdl        float64
	rows, tokens int64
	ahead        readAhead
}

// readAhead bounds what a ranking reads before it needs it: a recorded
// phrase's record read whole (see phraseRecords) and the probe documents
// of a tie read in one query (see readProbes). Tests lower them.
type readAhead struct {
	wholeRecord int64 // the most documents of a record read whole
	probes      int   // the most probe documents read in one query
	probeBytes  int   // the most of their text held
}

// defaultReadAhead: a record of ~6 bytes a document is then about the size
// of one common term's summaries.
func defaultReadAhead() readAhead {
	return readAhead{wholeRecord: 1 << 16, probes: 256, probeBytes: 1 << 20}
}

// impactPhrase is one phrase of the query.
type impactPhrase struct {
	match  string   // the quoted FTS5 phrase
	tokens []string // its tokens, as the index holds them
	ids    []int64  // their tracked term ids (nil: a rare phrase)
	idf    float64
	// minDF is the fewest documents any of its terms is in (a rare
	// phrase: its own document frequency), which bounds the cost of
	// finding its matches; perSession is how many of a session's
	// documents that term is in, on average.
	minDF      int64
	perSession float64
}

// planImpact decides whether match is ranked from the summaries; nil
// means FTS5 ranks it (no phrase is made of tracked terms only, or the
// persisted table is empty).
func planImpact(ctx context.Context, q querier, match string) (*impactPlan, error) {
	quoted, forms := matchPhrases(match), phraseForms(match)
	p := &impactPlan{}
	tracked := false
	for i, form := range forms {
		ph := impactPhrase{match: quoted[i], tokens: phraseTokens(form), idf: 1}
		if len(ph.tokens) == 0 {
			return nil, nil
		}
		ids := make([]int64, len(ph.tokens))
		all := true
		for k, t := range ph.tokens {
			var err error
			if ids[k], all, err = trackedID(ctx, q, t); err != nil {
				return nil, err
			}
			if !all {
				break
			}
		}
		if all {
			ph.ids, tracked = ids, true
		}
		p.phrases = append(p.phrases, ph)
	}
	if !tracked {
		return nil, nil
	}
	rows, tokens, err := tableTotals(ctx, q, "persisted_fts_data")
	if err != nil || rows == 0 {
		return nil, err
	}
	p.rows, p.tokens, p.avgdl = rows, tokens, float64(tokens)/float64(rows)
	return p, nil
}

// x is bm25's frequency-and-length factor, written operation for
// operation as FTS5 computes it (fts5_aux.c), so that scores computed
// here equal FTS5's to the last bit.
func (p *impactPlan) x(freq, tokens int32) float64 {
	k1, b := 1.2, 0.75
	f, d := float64(freq), float64(tokens)
	return float64(f*(k1+1.0)) / float64(f+float64(k1*(1-b+float64(b*d)/p.avgdl)))
}

// score is a document's bm25 (lower is better) given each phrase's
// frequency in it.
func (p *impactPlan) score(freqs []int32, tokens int32) float64 {
	s := 0.0
	for i, ph := range p.phrases {
		s += float64(ph.idf * p.x(freqs[i], tokens))
	}
	return -1.0 * s
}

// idfOf is bm25's idf for a phrase held by df of the persisted documents.
func (p *impactPlan) idfOf(df int64) float64 {
	return bm25Stats{rows: p.rows, hits: df}.idf()
}

// scoreText scores one document from its stored text.
func (p *impactPlan) scoreText(text string, sc *termScratch, freqs []int32) float64 {
	sc.toks = textTokens(sc.toks[:0], text)
	for i, ph := range p.phrases {
		freqs[i] = countPhrase(sc.toks, ph.tokens)
	}
	return p.score(freqs, int32(len(sc.toks)))
}

// sessionBound is one candidate session of an impact ranking (32 bytes:
// a query of common terms has one per session of the history).
type sessionBound struct {
	key   int64
	bound float64 // no document of the session scores below it
	// probe is the document the bound came from (a phrase's weakest
	// term's best): when it scores the bound for the whole phrase, no
	// document of the session scores better, and none that scores as
	// well sorts before it (see probeBest); 0 when there is none. For a
	// query of one tracked term, it is the session's best document, which
	// scores the bound.
	probe int64
	// tracked is the phrases of tracked terms' part of the bound: no
	// document holding none of the query's rare phrases scores below
	// -tracked (see rareBest).
	tracked float64
}

// impactRanking is the persisted sessions of a query ranked from the
// summaries, made exact only as far as the pages asked for so far need.
type impactRanking struct {
	plan   *impactPlan
	match  string
	single bool      // one tracked term: every bound is its session's best score
	cands  boundHeap // the sessions not made exact yet, strongest bound first
	exact  []winner  // the best documents of the sessions made exact that match, strongest first
	scr    termScratch
	freqs  []int32
	winSet map[int64]candidate // resolved winners, by document
	sp     predicates
	// refining is the time the sessions made exact one FTS5 query each
	// took; then matches holds every match of the query by session, read
	// in one pass (see streamCost), and a session is made exact from it.
	refining time.Duration
	matches  map[int64][]int64
	// rare is every match of the query's rare phrases, by session (nil
	// for a query of one tracked term).
	rare map[int64][]int64
	// known is every phrase's matches, when they are all known (see
	// scoreHits); else nil.
	known *knownMatches
	hit   []phraseMatch // scratch of scoreHits
	read  []phraseHit
	// probeTexts are probe documents' texts read ahead (see readProbes).
	probeTexts map[int64]string
}

// knownMatches are the matches of a query whose every phrase is rare or
// recorded, by phrase and session: a recorded phrase's with their bm25
// inputs (read at once, or by session from the record of ids), a rare
// phrase's with FTS5's score.
type knownMatches struct {
	ids      []int64
	recorded []map[int64][]phraseHit
	rare     []map[int64][]rareHit
}

// rareHit is a rare phrase's match and FTS5's score of it, with the
// phrase's frequency in it and its length when they are known (see
// countedBounds; else 0).
type rareHit struct {
	id    int64
	score float64
	f, dl int32
}

// A session is made exact one FTS5 query each until those queries have
// taken as long as reading every match of the query in one pass would
// (streamCost): then the matches are read, and the remaining sessions are
// made exact from them. Many sessions tied at the top of a phrase's
// ranking must all be looked at, and so must every candidate of a query
// with fewer matching sessions than the pages ask for (session_search
// reads up to 101 of a workspace's); one pass over a phrase whose rarest
// term is in a few thousand documents is then the cheaper way, while a
// phrase of three terms each in a hundred thousand documents keeps to one
// query per session. The queries are timed rather than costed at a
// constant: on one machine a session's query costs ~60-120 µs for 'failing
// test' but ~200-350 µs for a camel-case identifier's parts OR whole, and
// a constant that fits the one runs several times too many queries for
// the other (837 where 65 did, for parseWorkspaceManifest in one workspace
// of the large preset). Either way the winners are the same.
const perMatchingCost = 0.2

// streamCost estimates, in µs, the cost of reading every match of the
// query: FTS5 walks each phrase's rarest term's documents.
func (p *impactPlan) streamCost() int {
	cost := 0.0
	for _, ph := range p.phrases {
		cost += float64(ph.minDF) * perMatchingCost
	}
	return int(cost)
}

// refineDocsMax is how many documents per session, on average, a phrase's
// rarest term may be in for the summaries to rank it. Making a session
// exact tokenizes its matching documents: cheap in sessions of a few
// dozen documents, not in sessions of thousands (an agent's long-running
// session), whose best documents for a phrase FTS5 finds faster by
// scoring every match.
const refineDocsMax = 32

// rankImpact computes every candidate session's bound; nothing is made
// exact yet, and nil means FTS5 ranks the query better (refineDocsMax;
// not when every match is known, see scoreHits).
// sp are the session predicates, applied here so that only sessions that
// may be shown are looked at.
func (p *impactPlan) rankImpact(ctx context.Context, q querier, match string, sp predicates) (*impactRanking, error) {
	allowed, err := allowedSessions(ctx, q, sp)
	if err != nil {
		return nil, err
	}
	single := len(p.phrases) == 1 && len(p.phrases[0].ids) == 1
	// Each phrase's part of every candidate session's bound, in key order.
	contribs := make([][]sessionTop, len(p.phrases))
	// Each session's document that bounds a phrase of tracked terms (the
	// query's one phrase, or its parts phrase): when that document scores
	// the session's whole bound, it is the best.
	var probes []sessionTop
	// Every match of a rare phrase is read for its bound, and every match
	// of a phrase of several tracked terms for its idf: when that is every
	// phrase, the query's matches are all known, by session.
	var matches map[int64][]int64
	if len(p.phrases) > 1 {
		matches = map[int64][]int64{}
	}
	// The summaries of the tracked phrases' terms are decoded on other
	// goroutines while the rare phrases' matches are read.
	var wg sync.WaitGroup
	defer wg.Wait()
	recs, err := phraseRecords(ctx, q, p.phrases, allowed, p.ahead.wholeRecord)
	if err != nil {
		return nil, err
	}
	decodes := make([][]*termDecode, len(p.phrases))
	for i, ph := range p.phrases {
		if recs[i].whole() {
			continue // its record bounds it
		}
		for _, id := range distinctTerms(ph) {
			d, err := p.startDecode(ctx, q, id, allowed, &wg)
			if err != nil {
				return nil, err
			}
			decodes[i] = append(decodes[i], d)
		}
	}
	// Every match of the rare phrases, by session: a session's best
	// document among them is often its best (see rareBest).
	var rare map[int64][]int64
	if !single {
		rare = map[int64][]int64{}
	}
	// Each phrase's matches by session, when every phrase's are known: a
	// rare phrase's are read with their scores, a recorded phrase's are in
	// its record with their frequencies (see scoreHits).
	var known *knownMatches
	if len(p.phrases) > 1 {
		known = &knownMatches{ids: make([]int64, len(p.phrases)), recorded: make([]map[int64][]phraseHit, len(p.phrases)),
			rare: make([]map[int64][]rareHit, len(p.phrases))}
	}
	for i := range p.phrases {
		ph := &p.phrases[i]
		if ph.ids != nil {
			continue
		}
		var scored map[int64][]rareHit
		if known != nil {
			scored = map[int64][]rareHit{}
			known.rare[i] = scored
		}
		c, df, counted, err := p.countedBounds(ctx, q, ph.tokens, recs, allowed, rare, scored)
		if err == nil && !counted {
			c, df, err = rareBounds(ctx, q, ph.match, allowed, rare, scored)
		}
		if err != nil {
			return nil, err
		}
		// FTS5's score of a rare phrase's match is its idf times x.
		ph.idf, ph.minDF = p.idfOf(df), df
		contribs[i] = c
	}
	wg.Wait()
	long := false
	for i := range p.phrases {
		ph := &p.phrases[i]
		if ph.ids == nil {
			continue
		}
		var c []sessionTop
		if rec := recs[i]; rec.whole() {
			// Its record, read whole, bounds each session exactly.
			c = rec.tops(p)
			ph.minDF, ph.perSession = rec.df, float64(rec.df)/float64(max(len(rec.hits), 1))
			long = long || ph.perSession > refineDocsMax
			ph.idf, matches = p.idfOf(rec.df), nil
			if known != nil {
				known.recorded[i], known.ids[i] = rec.hits, rec.id
			}
		} else {
			var df int64
			if c, df, err = ph.trackedBounds(decodes[i]); err != nil {
				return nil, err
			}
			// Sessions of thousands of documents are ranked better by FTS5,
			// unless every match is known (no document is tokenized then).
			long = long || !single && ph.perSession > refineDocsMax
			if len(p.phrases) > 1 {
				if len(ph.ids) > 1 {
					// A record too large to read whole for a search of
					// every session (see phraseRecords) still knows the
					// phrase's matches: each candidate's are read as it
					// is made exact (scoreHits). Unrecorded, they are
					// read from FTS5 for the idf.
					if rec := recs[i]; rec != nil {
						df, matches = rec.df, nil
						if known != nil {
							known.recorded[i], known.ids[i] = nil, rec.id
						}
					} else if df, err = phraseMatches(ctx, q, ph.match, matches); err != nil {
						return nil, err
					}
				} else {
					matches = nil // a tracked term's matches are not read
				}
				if known != nil && known.ids[i] == 0 {
					known = nil
				}
				ph.idf = p.idfOf(df)
			}
		}
		if probes == nil && !recs[i].whole() && (len(p.phrases) == 1 || len(ph.ids) > 1) {
			probes = c // only its keys, documents and alone are read, which scaling keeps
		}
		if !single {
			for k := range c {
				c[k].x = float64(ph.idf * c[k].x)
			}
		}
		contribs[i] = c
	}
	if long && known == nil {
		return nil, nil
	}
	r := &impactRanking{plan: p, match: match, single: single, freqs: make([]int32, len(p.phrases)), sp: sp, winSet: map[int64]candidate{}, rare: rare, known: known}
	for key, ids := range rare {
		slices.Sort(ids)
		rare[key] = slices.Compact(ids)
	}
	if matches != nil {
		for key, ids := range rare {
			matches[key] = append(matches[key], ids...)
		}
		for key, ids := range matches {
			slices.Sort(ids)
			matches[key] = slices.Compact(ids)
		}
		r.matches = matches
	}
	r.cands = candidates(contribs, p.phrases, probes, single)
	heap.Init(&r.cands)
	return r, nil
}

// candidates merges the phrases' parts of the bounds (each in key order)
// into one candidate per session: its bound is each phrase's part, added
// in phrase order as bm25 adds them (a phrase the session lacks adds
// nothing), its tracked part the same over the phrases of tracked terms,
// and its probe the bounding document of probes when alone there (for a
// query of one tracked term, always: the session's best document).
func candidates(contribs [][]sessionTop, phrases []impactPhrase, probes []sessionTop, single bool) boundHeap {
	n := 0
	for _, c := range contribs {
		n += len(c)
	}
	out := make(boundHeap, 0, n)
	pos := make([]int, len(contribs))
	pi := 0
	for {
		key := int64(math.MaxInt64)
		for i, c := range contribs {
			if pos[i] < len(c) && c[pos[i]].key < key {
				key = c[pos[i]].key
			}
		}
		if key == math.MaxInt64 {
			return out
		}
		sum, tracked := 0.0, 0.0
		for i, c := range contribs {
			if pos[i] < len(c) && c[pos[i]].key == key {
				sum += c[pos[i]].x
				if phrases[i].ids != nil {
					tracked += c[pos[i]].x
				}
				pos[i]++
			}
		}
		b := sessionBound{key: key, bound: -1.0 * (0.0 + sum), tracked: tracked}
		for pi < len(probes) && probes[pi].key < key {
			pi++
		}
		if pi < len(probes) && probes[pi].key == key && (probes[pi].alone || single) {
			b.probe = key<<docBits | probes[pi].local
		}
		out = append(out, b)
	}
}

// boundHeap orders candidate sessions by bound (then key): only the
// strongest few of thousands are usually taken.
type boundHeap []sessionBound

func (h boundHeap) Len() int { return len(h) }
func (h boundHeap) Less(i, j int) bool {
	return h[i].bound < h[j].bound || h[i].bound == h[j].bound && h[i].key < h[j].key
}
func (h boundHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *boundHeap) Push(x any)   { *h = append(*h, x.(sessionBound)) }
func (h *boundHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// allowedSessions returns the persisted session keys sp admits that are
// not live here, or nil when that is every session.
func allowedSessions(ctx context.Context, q querier, sp predicates) (map[int64]bool, error) {
	var live int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM live_sessions`).Scan(&live); err != nil {
		return nil, err
	}
	if sp.count() == 0 && live == 0 {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT session_key FROM (SELECT session_key, session_id, cwd, created_at, parent_session,
		0 AS live, 1 AS persisted FROM persisted_sessions) WHERE session_id NOT IN (SELECT session_id FROM live_sessions)`+sp.where(), sp.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var key int64
		if err := rows.Scan(&key); err != nil {
			return nil, err
		}
		out[key] = true
	}
	return out, rows.Err()
}

// sessionTop is one session's part of a bound: for a phrase of tracked
// terms, the largest x its best document can have and the document that
// has it for the phrase's weakest term (alone: no other point of that
// term's frontier in the session has the same x, see probeBest); for a
// rare phrase, its best match's contribution.
type sessionTop struct {
	key   int64
	x     float64
	local int64
	alone bool
}

// distinctTerms returns the distinct terms of a phrase of tracked terms:
// each one's summaries are read, so that a session's bound is its weakest
// term's. (Reading only one of them, a looser bound, was tried for
// identifiers: it saved reading two parts' summaries and cost more
// sessions made exact; on the large preset it was faster for the two
// identifiers the bench searches and slower for most others.)
func distinctTerms(ph impactPhrase) []int64 {
	var out []int64
	for _, id := range ph.ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// termDecode is one tracked term's summaries, decoded a chunk of blocks
// per goroutine into its own region of tops: for each allowed session
// holding the term, the largest x its documents can have, in key order.
type termDecode struct {
	tops   []sessionTop // room for every session of every block
	chunks []termChunk
}

// termChunk is the decoding of a run of consecutive blocks.
type termChunk struct {
	docs, sessions int64 // over every session, allowed or not
	n              int   // the sessions it put in its region of tops
	err            error
}

// decodeChunk is how many blocks (of up to 64 sessions) one goroutine
// decodes: a common term's summaries are a few hundred KiB of varints.
const decodeChunk = 32

// startDecode reads term id's summary blocks and starts decoding them; the
// result is valid once wg is done.
func (p *impactPlan) startDecode(ctx context.Context, q querier, id int64, allowed map[int64]bool, wg *sync.WaitGroup) (*termDecode, error) {
	rows, err := q.QueryContext(ctx, `SELECT entries FROM term_sessions WHERE id BETWEEN ? AND ?`, id<<32, id<<32|(1<<32-1))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// The blocks are copied into 64 KiB arenas rather than one allocation
	// each (database/sql would copy each into its own).
	var blocks [][]byte
	var arena []byte
	for rows.Next() {
		var raw sql.RawBytes
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		if len(arena)+len(raw) > cap(arena) {
			arena = make([]byte, 0, max(64<<10, len(raw)))
		}
		start := len(arena)
		arena = append(arena, raw...)
		blocks = append(blocks, arena[start:len(arena):len(arena)])
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	d := &termDecode{tops: make([]sessionTop, len(blocks)<<blockBits), chunks: make([]termChunk, (len(blocks)+decodeChunk-1)/decodeChunk)}
	for i := range d.chunks {
		lo, hi := i*decodeChunk, min(len(blocks), (i+1)*decodeChunk)
		wg.Add(1)
		go func(c *termChunk, region []sessionTop, blocks [][]byte) {
			defer wg.Done()
			p.decodeTerm(c, region, blocks, allowed)
		}(&d.chunks[i], d.tops[lo<<blockBits:hi<<blockBits:hi<<blockBits], blocks[lo:hi])
	}
	return d, nil
}

// decodeTerm decodes blocks into region (room for each of their sessions).
func (p *impactPlan) decodeTerm(c *termChunk, region []sessionTop, blocks [][]byte, allowed map[int64]bool) {
	var scratch []termPoint
	tops := region[:0]
	defer func() { c.n = len(tops) }()
	full := false // more sessions than the blocks can hold: malformed
	for _, buf := range blocks {
		scratch, c.err = decodeBlock(buf, scratch, func(key int64, docs int32, points []termPoint) {
			c.docs += int64(docs)
			c.sessions++
			if full = full || len(tops) == cap(tops); full || allowed != nil && !allowed[key] {
				return
			}
			t := sessionTop{key: key, x: math.Inf(-1)}
			for _, pt := range points {
				switch x := p.x(pt.tf, pt.dl); {
				case x > t.x:
					t.x, t.local, t.alone = x, pt.local, true
				case x == t.x:
					t.local, t.alone = min(t.local, pt.local), false
				}
			}
			tops = append(tops, t)
		})
		if c.err == nil && full {
			c.err = errBadBlock
		}
		if c.err != nil {
			return
		}
	}
}

// result moves the chunks' sessions together, in key order, once decoded.
func (d *termDecode) result() ([]sessionTop, int64, int64, error) {
	var docs, sessions int64
	n := 0
	for i, c := range d.chunks {
		if c.err != nil {
			return nil, 0, 0, c.err
		}
		docs, sessions = docs+c.docs, sessions+c.sessions
		start := i * decodeChunk << blockBits
		n += copy(d.tops[n:], d.tops[start:start+c.n])
	}
	return d.tops[:n], docs, sessions, nil
}

// trackedBounds returns, from its terms' decoded summaries, in key order,
// for each allowed session holding every one of them, the largest x its
// best document can have for the phrase (for a one-term phrase, its best
// document's), and the document frequency of its first term (the
// phrase's, when it is one term).
func (ph *impactPhrase) trackedBounds(terms []*termDecode) ([]sessionTop, int64, error) {
	var out []sessionTop
	var df int64
	ph.minDF = -1
	for k, d := range terms {
		tops, tdf, sessions, err := d.result()
		if err != nil {
			return nil, 0, err
		}
		if k == 0 {
			out, df = tops, tdf
		} else {
			out = weakest(out, tops)
		}
		if ph.minDF < 0 || tdf < ph.minDF {
			ph.minDF, ph.perSession = tdf, float64(tdf)/float64(max(sessions, 1))
		}
	}
	return out, df, nil
}

// weakest keeps the sessions of a (the earlier terms' bounds) that b (one
// more term's) also holds, each with the smaller of its two x (b's on a
// tie): a document holding a phrase holds each of its terms.
func weakest(a, b []sessionTop) []sessionTop {
	out := a[:0]
	j := 0
	for _, t := range a {
		for j < len(b) && b[j].key < t.key {
			j++
		}
		if j == len(b) {
			break
		}
		if b[j].key != t.key {
			continue
		}
		if b[j].x <= t.x {
			t = b[j]
		}
		out = append(out, t)
	}
	return out
}

// phraseRecords returns the records of a query's recorded phrases of
// several tracked terms when the query has other phrases too (an
// identifier's parts beside its whole); nil for every other phrase. A
// record's documents are read (whole) when it holds no more than most, or
// when the search is of some sessions only (allowed not nil: a
// workspace's), whose documents are then all the ranking needs. Such a
// record bounds each session exactly (see phraseRecord.tops) and costs a
// few KiB to read (~5 KiB for the large preset's "parse workspace
// manifest", 922 documents), where bounding the phrase from its terms'
// summaries reads and decodes each term's (~220 KiB each there); and a
// session holding the phrase's terms apart only is no candidate.
func phraseRecords(ctx context.Context, q querier, phrases []impactPhrase, allowed map[int64]bool, most int64) ([]*phraseRecord, error) {
	recs := make([]*phraseRecord, len(phrases))
	if len(phrases) < 2 {
		return recs, nil
	}
	for i, ph := range phrases {
		if len(ph.ids) < 2 {
			continue
		}
		rec, recorded, err := recordedPhrase(ctx, q, ph.tokens)
		if err != nil {
			return nil, err
		}
		if !recorded {
			continue
		}
		if rec.df <= most || allowed != nil {
			if err := rec.readDocs(ctx, q, allowed); err != nil {
				return nil, err
			}
		}
		recs[i] = &rec
	}
	return recs, nil
}

// whole reports whether the record's documents were read (see
// phraseRecords).
func (r *phraseRecord) whole() bool { return r != nil && r.hits != nil }

// tops is each session's best x for the phrase, from its record, in key
// order. It names no document: probeBest's reasoning holds for a term's
// frontier, and a query whose matches are all known has its sessions made
// exact from them (scoreHits).
func (r *phraseRecord) tops(p *impactPlan) []sessionTop {
	out := make([]sessionTop, 0, len(r.hits))
	for _, key := range slices.Sorted(maps.Keys(r.hits)) {
		t := sessionTop{key: key, x: math.Inf(-1)}
		for _, h := range r.hits[key] {
			t.x = max(t.x, p.x(h.f, h.dl))
		}
		out = append(out, t)
	}
	return out
}

// rareBounds streams a rare phrase's matches (fewer than trackMin for one
// of its terms) and returns each allowed session's largest contribution
// (its idf times x, from FTS5's own score) and the phrase's document
// frequency. matches, when not nil, receives the allowed matches, and
// scored the same with their scores.
func rareBounds(ctx context.Context, q querier, match string, allowed map[int64]bool, matches map[int64][]int64, scored map[int64][]rareHit) ([]sessionTop, int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT rowid, rank FROM persisted_fts WHERE persisted_fts MATCH ? ORDER BY rowid`, match)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []sessionTop
	var df int64
	for rows.Next() {
		var id int64
		var score float64
		if err := rows.Scan(&id, &score); err != nil {
			return nil, 0, err
		}
		df++
		if allowed != nil && !allowed[id>>docBits] {
			continue
		}
		out = addRare(out, rareHit{id: id, score: score}, matches, scored)
	}
	return out, df, rows.Err()
}

// addRare adds a rare phrase's match (the next in rowid order) to its
// session's bound in out, and to matches and scored when they are not nil.
func addRare(out []sessionTop, h rareHit, matches map[int64][]int64, scored map[int64][]rareHit) []sessionTop {
	key := h.id >> docBits
	switch n := len(out); {
	case n == 0 || out[n-1].key != key:
		out = append(out, sessionTop{key: key, x: -h.score})
	case -h.score > out[n-1].x:
		out[n-1].x = -h.score
	}
	if matches != nil {
		matches[key] = append(matches[key], h.id)
	}
	if scored != nil {
		scored[key] = append(scored[key], h)
	}
	return out
}

// countedBounds is rareBounds for a rare phrase of one term whose every
// match has its length in a record read whole (see phraseRecords): an
// identifier's whole beside its recorded parts, which every document
// holding the whole holds. The matches and their frequencies come from
// the index's vocabulary and are scored here, with FTS5's formula (bm25),
// where FTS5 scoring them reads each one's length from its docsize table,
// a page each: ~5 ms of the large preset's identifier search, where the
// vocabulary takes under one. false, and nothing added to matches or
// scored, when the phrase is not such or a match's length is unknown.
func (p *impactPlan) countedBounds(ctx context.Context, q querier, tokens []string, recs []*phraseRecord, allowed map[int64]bool, matches map[int64][]int64, scored map[int64][]rareHit) ([]sessionTop, int64, bool, error) {
	var records []*phraseRecord
	for _, rec := range recs {
		if rec.whole() {
			records = append(records, rec)
		}
	}
	if len(tokens) != 1 || len(records) == 0 {
		return nil, 0, false, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT doc, count(*) FROM temp.persisted_vocab_instance WHERE term = ? GROUP BY doc ORDER BY doc`, tokens[0])
	if err != nil {
		return nil, 0, false, err
	}
	defer rows.Close()
	var df int64
	var hits []phraseHit // the allowed matches, with their frequencies and lengths
	for rows.Next() {
		var h phraseHit
		if err := rows.Scan(&h.id, &h.f); err != nil {
			return nil, 0, false, err
		}
		df++
		if allowed != nil && !allowed[h.id>>docBits] {
			continue
		}
		if h.dl = recordedLength(records, h.id); h.dl == 0 {
			return nil, 0, false, rows.Err()
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, err
	}
	stats := bm25Stats{rows: p.rows, tokens: p.tokens, hits: df}
	var out []sessionTop
	for _, h := range hits {
		out = addRare(out, rareHit{id: h.id, score: bm25(float64(h.f), float64(h.dl), stats), f: h.f, dl: h.dl}, matches, scored)
	}
	return out, df, true, nil
}

// recordedLength is the length of document id as one of records holds it
// (0 when none does).
func recordedLength(records []*phraseRecord, id int64) int32 {
	for _, rec := range records {
		hits := rec.hits[id>>docBits]
		if i, ok := slices.BinarySearchFunc(hits, phraseHit{id: id}, compareHits); ok {
			return hits[i].dl
		}
	}
	return 0
}

// phraseMatches counts a phrase's matches (its document frequency, for
// its idf) and, when matches is not nil, adds them to it by session.
func phraseMatches(ctx context.Context, q querier, match string, matches map[int64][]int64) (int64, error) {
	if matches == nil {
		var df int64
		err := q.QueryRowContext(ctx, `SELECT count(*) FROM persisted_fts WHERE persisted_fts MATCH ?`, match).Scan(&df)
		return df, err
	}
	rows, err := q.QueryContext(ctx, `SELECT rowid FROM persisted_fts WHERE persisted_fts MATCH ?`, match)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var df int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		df++
		matches[id>>docBits] = append(matches[id>>docBits], id)
	}
	return df, rows.Err()
}

// top returns, strongest first, the n strongest sessions, each with its
// best document; all of them, with all true, once every candidate is
// exact.
func (r *impactRanking) top(ctx context.Context, q querier, n int) ([]candidate, bool, error) {
	for len(r.cands) > 0 {
		if len(r.exact) >= n && r.cands[0].bound > r.exact[n-1].score {
			break
		}
		c := heap.Pop(&r.cands).(sessionBound)
		var best winner // docID 0 when the session has no match
		exact := r.single
		if exact {
			best = winner{docID: c.probe, score: c.bound}
		}
		var err error
		if r.known != nil {
			if best, exact, err = r.scoreHits(ctx, q, c.key); err != nil {
				return nil, false, err
			}
		}
		if !exact && len(r.rare[c.key]) > 0 {
			if best, exact, err = r.rareBest(ctx, q, c); err != nil {
				return nil, false, err
			}
		}
		if !exact && c.probe != 0 {
			if best, exact, err = r.probeBest(ctx, q, c); err != nil {
				return nil, false, err
			}
		}
		if !exact {
			if best, err = r.refine(ctx, q, c.key); err != nil {
				return nil, false, err
			}
		}
		if best.docID != 0 {
			i, _ := slices.BinarySearchFunc(r.exact, best, compareWinners)
			r.exact = slices.Insert(r.exact, i, best)
		}
	}
	all := len(r.cands) == 0
	// Every session that can still rank among the first n is exact: the
	// first n, by score and length, and those tied with the n-th on both
	// are resolved (the later tie-breaks are the documents' and sessions'
	// columns).
	take := len(r.exact)
	if !all && take > n {
		nth := r.exact[n-1]
		rest := r.exact[n:]
		take = n + sort.Search(len(rest), func(i int) bool { return compareScoreLength(rest[i], nth) > 0 })
	}
	var missing []winner
	for _, w := range r.exact[:take] {
		if _, ok := r.winSet[w.docID]; !ok {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		got, err := resolveWinners(ctx, q, missing, r.sp)
		if err != nil {
			return nil, false, err
		}
		for _, c := range got {
			r.winSet[c.docID] = c
		}
	}
	out := make([]candidate, 0, take)
	for _, w := range r.exact[:take] {
		if c, ok := r.winSet[w.docID]; ok {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, compareSessions)
	if all {
		return out, true, nil
	}
	return out[:min(len(out), n)], false, nil
}

// compareWinners orders sessions' best documents by score, then length
// (the first tie-breaks, which compareSessions applies after them on the
// resolved rows), then rowid.
func compareWinners(a, b winner) int {
	if c := compareScoreLength(a, b); c != 0 {
		return c
	}
	return cmpInt(a.docID, b.docID)
}

// compareScoreLength orders by score, then length in code points (the
// rowid's bits above the ordinal, see docBits).
func compareScoreLength(a, b winner) int {
	if c := cmp.Compare(a.score, b.score); c != 0 {
		return c
	}
	return cmpInt(a.docID&docMask>>ordBits, b.docID&docMask>>ordBits)
}

// probeBest scores the document a bound came from (the best point of a
// phrase's weakest term, alone at its x on that term's frontier). If it
// scores the session's whole bound, it is the session's best: nothing
// scores better than the bound, and a document d scoring as well reaches
// every phrase's part of the bound, so for that term x at least the bound
// (it holds the term at least as often as the phrase): its own point, or
// one beating it, is also best on that frontier, and being alone there,
// that point is the probe's: d has the probe's frequency and length, and
// of equal points the frontier kept the smaller rowid, the tie's winner.
func (r *impactRanking) probeBest(ctx context.Context, q querier, c sessionBound) (winner, bool, error) {
	text, ok := r.probeTexts[c.probe]
	if !ok {
		if err := r.readProbes(ctx, q, c); err != nil {
			return winner{}, false, err
		}
		if text, ok = r.probeTexts[c.probe]; !ok {
			return winner{}, false, nil
		}
	}
	delete(r.probeTexts, c.probe)
	s := r.plan.scoreText(text, &r.scr, r.freqs)
	if s != c.bound {
		return winner{}, false, nil
	}
	return winner{docID: c.probe, score: s}, true, nil
}

// readProbes reads the text of c's probe document and, in the same query,
// those of the candidates still to be made exact that are tied with c:
// each of them is looked at before the ranking can stop (see top), and
// when summaries tie a phrase's bounds across many sessions (hundreds for
// "failing test" on the large preset), one query for them all costs a
// fraction of one each. The candidates tied with c are the heap's top: a
// node bounded worse than c roots no tie. Only candidates that go
// straight to probeBest are read ahead, within the plan's readAhead.
func (r *impactRanking) readProbes(ctx context.Context, q querier, c sessionBound) error {
	ids := []int64{c.probe}
	var visit func(i int)
	visit = func(i int) {
		if i >= len(r.cands) || len(ids) >= r.plan.ahead.probes || r.cands[i].bound != c.bound {
			return
		}
		if o := r.cands[i]; o.probe != 0 && r.known == nil && len(r.rare[o.key]) == 0 {
			ids = append(ids, o.probe)
		}
		visit(2*i + 1)
		visit(2*i + 2)
	}
	if !r.single {
		visit(0)
	}
	rows, err := q.QueryContext(ctx, `SELECT doc_id, text FROM persisted_docs WHERE doc_id IN (SELECT value FROM json_each(?))`, idList(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	if r.probeTexts == nil {
		r.probeTexts = map[int64]string{}
	}
	held := 0
	for rows.Next() {
		var id int64
		var text sql.RawBytes
		if err := rows.Scan(&id, &text); err != nil {
			return err
		}
		// A few large documents could hold much memory until probed; the
		// ones past probeBytes are read again when their turn comes.
		if id == c.probe || held+len(text) <= r.plan.ahead.probeBytes {
			r.probeTexts[id] = string(text)
			held += len(text)
		}
	}
	return rows.Err()
}

// rareBest scores the session's matches of the query's rare phrases,
// which rareBounds read. Every other document of the session holds only
// phrases of tracked terms, each no more often than the session's bound
// for it allows, and scores no better than -tracked: when the best of the
// rare phrases' matches scores better than that, it is the session's best
// (and of those scoring as well, the one that sorts first).
func (r *impactRanking) rareBest(ctx context.Context, q querier, c sessionBound) (winner, bool, error) {
	best, err := r.scoreDocs(ctx, q, r.rare[c.key])
	if err != nil || best.docID == 0 || !(best.score < -1.0*(0.0+c.tracked)) {
		return winner{}, false, err
	}
	return best, true, nil
}

// scoreHits returns session key's best document, scored from the
// phrases' matches in it: a document's frequency of each phrase is its
// match's, or 0 when it holds none, exactly as FTS5 counts them. A
// recorded phrase's matches carry theirs; a rare phrase's is recovered
// from FTS5's score of the match given the document's length (see
// exactFreq). false when one is not recovered exactly: the session is
// then scored from its documents' text.
func (r *impactRanking) scoreHits(ctx context.Context, q querier, key int64) (winner, bool, error) {
	r.hit = r.hit[:0]
	for i, h := range r.known.recorded {
		hits := h[key]
		if h == nil && r.known.ids[i] != 0 {
			var err error
			if r.read, err = recordedHits(ctx, q, r.known.ids[i], key, r.read[:0]); err != nil {
				return winner{}, false, err
			}
			hits = r.read
		}
		for _, x := range hits {
			r.hit = append(r.hit, phraseMatch{x, i})
		}
	}
	for i, h := range r.known.rare {
		s := bm25Stats{rows: r.plan.rows, tokens: r.plan.tokens, hits: r.plan.phrases[i].minDF}
		for _, x := range h[key] {
			f, dl := x.f, x.dl
			if dl == 0 {
				// Only FTS5's score is known: the length is read and the
				// frequency recovered from the score.
				var sz []byte
				if err := q.QueryRowContext(ctx, `SELECT sz FROM persisted_fts_docsize WHERE id = ?`, x.id).Scan(&sz); err != nil {
					return winner{}, false, err
				}
				dl = int32(docTokens(sz))
				var ok bool
				if f, ok = exactFreq(x.score, dl, s); !ok {
					return winner{}, false, nil
				}
			}
			r.hit = append(r.hit, phraseMatch{phraseHit{x.id, f, dl}, i})
		}
	}
	slices.SortFunc(r.hit, func(a, b phraseMatch) int { return cmpInt(a.id, b.id) })
	var best winner
	for k := 0; k < len(r.hit); {
		id, dl := r.hit[k].id, r.hit[k].dl
		clear(r.freqs)
		for ; k < len(r.hit) && r.hit[k].id == id; k++ {
			r.freqs[r.hit[k].phrase] = r.hit[k].f
		}
		best.consider(id, r.plan.score(r.freqs, dl))
	}
	return best, true, nil
}

// phraseMatch is a document's hit of one phrase of a query (by index).
type phraseMatch struct {
	phraseHit
	phrase int
}

// scoreDocs returns the best of documents ids, read and scored here.
func (r *impactRanking) scoreDocs(ctx context.Context, q querier, ids []int64) (winner, error) {
	var best winner
	for _, id := range ids {
		var text string
		if err := q.QueryRowContext(ctx, `SELECT text FROM persisted_docs WHERE doc_id = ?`, id).Scan(&text); err != nil {
			return winner{}, err
		}
		best.consider(id, r.plan.scoreText(text, &r.scr, r.freqs))
	}
	return best, nil
}

// consider makes document id, of score s, the best if it scores better,
// or as well and sorts first (a smaller rowid in a session is a shorter
// document, or as long and later).
func (best *winner) consider(id int64, s float64) {
	if best.docID == 0 || s < best.score || (s == best.score && id < best.docID) {
		*best = winner{docID: id, score: s}
	}
}

// refine finds session key's best document exactly: the query's matches
// in it, tokenized and scored here.
func (r *impactRanking) refine(ctx context.Context, q querier, key int64) (winner, error) {
	if r.matches == nil && r.refining >= time.Duration(r.plan.streamCost())*time.Microsecond {
		if err := r.readMatches(ctx, q); err != nil {
			return winner{}, err
		}
	}
	if r.matches != nil {
		return r.scoreDocs(ctx, q, r.matches[key])
	}
	var best winner
	start := time.Now()
	defer func() { r.refining += time.Since(start) }()
	rows, err := q.QueryContext(ctx, `SELECT d.doc_id, d.text FROM persisted_fts f JOIN persisted_docs d ON d.doc_id = f.rowid
		WHERE persisted_fts MATCH ? AND f.rowid BETWEEN ? AND ?`, r.match, key<<docBits, key<<docBits|docMask)
	if err != nil {
		return winner{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return winner{}, err
		}
		best.consider(id, r.plan.scoreText(text, &r.scr, r.freqs))
	}
	return best, rows.Err()
}

// readMatches reads every match of the query, by session.
func (r *impactRanking) readMatches(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT rowid FROM persisted_fts WHERE persisted_fts MATCH ?`, r.match)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.matches = map[int64][]int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		r.matches[id>>docBits] = append(r.matches[id>>docBits], id)
	}
	return rows.Err()
}

// scoreLive scores live documents as persisted ones are scored.
func (p *impactPlan) scoreLive(ctx context.Context, q querier, live []candidate) error {
	var sc termScratch
	freqs := make([]int32, len(p.phrases))
	for i := range live {
		var text string
		if err := q.QueryRowContext(ctx, `SELECT text FROM live_docs WHERE doc_id = ?`, live[i].docID).Scan(&text); err != nil {
			return err
		}
		live[i].score = p.scoreText(text, &sc, freqs)
	}
	return nil
}
