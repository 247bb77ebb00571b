package searchindex

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// candidate is one matching document with what ranking and hits need.
type candidate struct {
	live      bool
	docID     int64
	score     float64 // bm25 on the persisted table's scale; lower is better
	tokens    float64 // live documents only: token count, for rescaling
	length    int64   // code points of the stored text
	time      int64
	seq       int
	typ       string
	surface   string
	header    session.Header
	persisted bool
}

// compareEvents orders documents of one session: score, then the shorter
// document, the later time, the later seq.
func compareEvents(a, b candidate) int {
	if c := cmp.Compare(a.score, b.score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.length, b.length); c != 0 {
		return c
	}
	if c := cmp.Compare(b.time, a.time); c != 0 {
		return c
	}
	return cmp.Compare(b.seq, a.seq)
}

// compareSessions orders sessions by their best documents: score, shorter
// document, later time, then session id in byte order, then later seq.
func compareSessions(a, b candidate) int {
	if c := cmp.Compare(a.score, b.score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.length, b.length); c != 0 {
		return c
	}
	if c := cmp.Compare(b.time, a.time); c != 0 {
		return c
	}
	if c := strings.Compare(a.header.ID, b.header.ID); c != 0 {
		return c
	}
	return cmp.Compare(b.seq, a.seq)
}

// headerColumns are the header columns both session tables share, in the
// order scanHeader reads them.
const headerColumns = `c.session_id, c.version, c.created_at, c.cwd, c.parent_session, c.seed_length, c.delegation_depth, c.agent_preset`

func scanHeader(h *session.Header) []any {
	return []any{&h.ID, &h.Version, &h.CreatedAt, &h.Cwd, &h.ParentSession, &h.SeedLength, &h.DelegationDepth, &h.AgentPreset}
}

// liveMatches returns every live document matching the query and the
// predicates, scored by the live table's own bm25, with the live table's
// statistics. sessionKey, when non-zero, restricts the search to one
// overlaid session.
func liveMatches(ctx context.Context, q querier, match string, sp, ep predicates, persistedVisible bool, sessionKey int64) ([]candidate, bm25Stats, error) {
	query := `SELECT live_fts.rowid, live_fts.rank, live_fts_docsize.sz, d.seq, d.type, d.time, d.surface, d.codepoint_length, c.persisted, ` + headerColumns + `
		FROM live_fts
		JOIN live_fts_docsize ON live_fts_docsize.id = live_fts.rowid
		JOIN live_docs d ON d.doc_id = live_fts.rowid
		JOIN (SELECT session_key, session_id, version, created_at, cwd, parent_session, seed_length, delegation_depth,
			agent_preset, 1 AS live, CASE WHEN ? THEN persisted ELSE 0 END AS persisted FROM live_sessions) c
			ON c.session_key = live_fts.rowid >> ` + strconv.Itoa(docBits) + `
		WHERE live_fts MATCH ?`
	args := []any{persistedVisible, match}
	if sessionKey != 0 {
		query += ` AND live_fts.rowid BETWEEN ? AND ?`
		args = append(args, sessionKey<<docBits, sessionKey<<docBits|docMask)
	}
	query += ep.where() + sp.where()
	args = append(append(args, ep.args...), sp.args...)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, bm25Stats{}, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		c := candidate{live: true}
		var sz []byte
		dest := append([]any{&c.docID, &c.score, &sz, &c.seq, &c.typ, &c.time, &c.surface, &c.length, &c.persisted}, scanHeader(&c.header)...)
		if err := rows.Scan(dest...); err != nil {
			return nil, bm25Stats{}, err
		}
		c.tokens = docTokens(sz)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, bm25Stats{}, err
	}
	if len(out) == 0 {
		return nil, bm25Stats{}, nil
	}
	st, err := stats(ctx, q, "live_fts", match)
	return out, st, err
}

// stats reads an FTS5 table's bm25 inputs for one match expression.
func stats(ctx context.Context, q querier, fts, match string) (bm25Stats, error) {
	var s bm25Stats
	var err error
	if s.rows, s.tokens, err = tableTotals(ctx, q, fts+"_data"); err != nil || s.rows == 0 {
		return s, err
	}
	err = q.QueryRowContext(ctx, `SELECT count(*) FROM `+fts+` WHERE `+fts+` MATCH ?`, match).Scan(&s.hits)
	return s, err
}

// persistedStats is stats of the persisted table, with the match count
// taken from hits when it is known.
func persistedStats(ctx context.Context, q querier, match string, hits *int64) (bm25Stats, error) {
	if hits == nil {
		return stats(ctx, q, "persisted_fts", match)
	}
	var s bm25Stats
	var err error
	s.rows, s.tokens, err = tableTotals(ctx, q, "persisted_fts_data")
	s.hits = *hits
	return s, err
}

// onPersistedScale rescales live candidates so they rank against persisted
// ones as if both tables were one corpus. With an empty persisted table the
// live table is the only scale there is. persistedHits, when not nil, is
// how many persisted documents match the query (the persisted ranking
// streamed them all), which spares counting them again: a full pass over
// the query's postings.
func onPersistedScale(ctx context.Context, q querier, match string, live []candidate, liveStats bm25Stats, persistedHits *int64) error {
	if len(live) == 0 {
		return nil
	}
	if phrases := matchPhrases(match); len(phrases) > 1 {
		return phrasesOnPersistedScale(ctx, q, phrases, live)
	}
	ps, err := persistedStats(ctx, q, match, persistedHits)
	if err != nil {
		return err
	}
	if ps.rows == 0 {
		return nil
	}
	for i := range live {
		live[i].score = rescale(live[i].score, live[i].tokens, liveStats, ps)
	}
	return nil
}

// phrasesOnPersistedScale rescales live candidates of a query of several
// phrases (OR). FTS5's bm25 sums one term per phrase, each with that
// phrase's own idf, so the live score cannot be split back into phrase
// frequencies: each phrase is scored on the live table alone, its frequency
// recovered and its term recomputed on the persisted scale, and the terms
// are added in phrase order, as FTS5 adds them.
func phrasesOnPersistedScale(ctx context.Context, q querier, phrases []string, live []candidate) error {
	sums := make([]float64, len(live))
	for _, ph := range phrases {
		ps, err := stats(ctx, q, "persisted_fts", ph)
		if err != nil || ps.rows == 0 {
			return err
		}
		ls, err := stats(ctx, q, "live_fts", ph)
		if err != nil {
			return err
		}
		scores := map[int64]float64{}
		rows, err := q.QueryContext(ctx, `SELECT rowid, rank FROM live_fts WHERE live_fts MATCH ?`, ph)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var score float64
			if err := rows.Scan(&id, &score); err != nil {
				rows.Close()
				return err
			}
			scores[id] = score
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for i, c := range live {
			if s, ok := scores[c.docID]; ok {
				sums[i] += bm25(phraseFreq(s, c.tokens, ls), c.tokens, ps)
			}
		}
	}
	for i := range live {
		live[i].score = sums[i]
	}
	return nil
}

// bestPerSession keeps each session's strongest document, strongest first.
func bestPerSession(cands []candidate) []candidate {
	best := map[string]int{}
	var out []candidate
	for _, c := range cands {
		i, ok := best[c.header.ID]
		switch {
		case !ok:
			best[c.header.ID] = len(out)
			out = append(out, c)
		case compareEvents(c, out[i]) < 0:
			out[i] = c
		}
	}
	slices.SortFunc(out, compareSessions)
	return out
}

// persistedRanking is every persisted session's strongest match, strongest
// first, resolved into candidates only as far as the pages asked for so far
// need.
//
// FTS5 hands over every match's rowid and rank in rowid order, so a
// session's matches arrive together (rowid>>docBits is its key) and its
// strongest one is kept as they stream by: no sorter holds every match,
// and no document or session row is read for a match that loses. Rank ties
// within a session fall to the smallest rowid, the first one seen, which
// is the documented tie-break order by construction (see docBits). The
// sessions' winners are then taken strongest first and resolved (session
// predicates, live shadowing, the tie-break columns) a batch at a time by
// top.
type persistedRanking struct {
	sp       predicates
	matches  int64       // the documents that matched the query and the event predicates
	winners  []winner    // strongest first (score, then rowid)
	next     int         // winners[:next] are resolved
	resolved []candidate // the resolved winners that passed, in no particular order
}

// rankPersisted streams the persisted matches and orders each session's
// strongest; nothing is resolved yet. With session predicates, only the
// winners of the sessions they admit are kept (see allowedSessions): a
// search confined to one workspace, as every model-facing one is, then
// resolves its own sessions' rows, not those of every workspace only to
// drop them.
func rankPersisted(ctx context.Context, q querier, match string, sp, ep predicates) (*persistedRanking, error) {
	best, matches, err := sessionWinners(ctx, q, match, ep)
	if err != nil {
		return nil, err
	}
	if sp.count() > 0 {
		allowed, err := allowedSessions(ctx, q, sp)
		if err != nil {
			return nil, err
		}
		best = slices.DeleteFunc(best, func(w winner) bool { return !allowed[w.docID>>docBits] })
	}
	slices.SortFunc(best, func(a, b winner) int {
		if c := cmp.Compare(a.score, b.score); c != 0 {
			return c
		}
		return cmp.Compare(a.docID, b.docID)
	})
	return &persistedRanking{sp: sp, matches: matches, winners: best}, nil
}

// top returns, strongest first, the n strongest persisted sessions that
// match, each with its strongest document, excluding sessions that are
// live here; all of them, with all true, once every winner is resolved.
// It resolves winners a batch at a time until n sessions passed, then
// exactly the rest of those tied with the n-th, so the full tie-break
// order decides between them as it would over every match.
// A later call with a larger n goes on from there, in the same indexed
// generation (the ranking is kept per generation, see rankKey).
func (r *persistedRanking) top(ctx context.Context, q querier, n int) (out []candidate, all bool, err error) {
	batch := max(n-len(r.resolved), 32)
	for r.next < len(r.winners) {
		end := min(len(r.winners), r.next+batch)
		if len(r.resolved) >= n {
			// Only the sessions tied with the n-th are left to resolve.
			nth := nthScore(r.resolved, n)
			rest := r.winners[r.next:]
			end = r.next + sort.Search(len(rest), func(i int) bool { return rest[i].score > nth })
			if end == r.next {
				break
			}
		}
		got, err := resolveWinners(ctx, q, r.winners[r.next:end], r.sp)
		if err != nil {
			return nil, false, err
		}
		r.resolved = append(r.resolved, got...)
		r.next, batch = end, batch*2
	}
	out = slices.Clone(r.resolved)
	slices.SortStableFunc(out, compareSessions)
	if r.next == len(r.winners) {
		return out, true, nil
	}
	return out[:min(len(out), n)], false, nil
}

// winner is one session's strongest match, as FTS5 reports it.
type winner struct {
	docID int64
	score float64
}

// sessionWinners streams every persisted match (rowid order, so each
// session's matches are contiguous), keeps each session's strongest and
// counts the matches.
func sessionWinners(ctx context.Context, q querier, match string, ep predicates) ([]winner, int64, error) {
	query := `SELECT persisted_fts.rowid, persisted_fts.rank FROM persisted_fts`
	if ep.count() > 0 {
		query += ` JOIN persisted_docs ON persisted_docs.doc_id = persisted_fts.rowid`
	}
	query += ` WHERE persisted_fts MATCH ?` + ep.where() + ` ORDER BY persisted_fts.rowid`
	rows, err := q.QueryContext(ctx, query, append([]any{match}, ep.args...)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var best []winner
	var matches int64
	session := int64(-1)
	for rows.Next() {
		var w winner
		if err := rows.Scan(&w.docID, &w.score); err != nil {
			return nil, 0, err
		}
		matches++
		switch key := w.docID >> docBits; {
		case key != session:
			session = key
			best = append(best, w)
		case w.score < best[len(best)-1].score:
			best[len(best)-1] = w
		}
	}
	return best, matches, rows.Err()
}

// nthScore is the score of the n-th strongest of the resolved sessions
// (n <= len(out)).
func nthScore(out []candidate, n int) float64 {
	scores := make([]float64, len(out))
	for i, c := range out {
		scores[i] = c.score
	}
	slices.Sort(scores)
	return scores[n-1]
}

// idList is ids as a JSON array, the argument of "IN (SELECT value FROM
// json_each(?))": one statement for any number of ids.
func idList(ids []int64) string {
	b := append(make([]byte, 0, 2+len(ids)*15), '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// resolveWinners reads the document and session rows of some winners and
// keeps those whose session passes the session predicates and is not live
// here, in no particular order.
func resolveWinners(ctx context.Context, q querier, ws []winner, sp predicates) ([]candidate, error) {
	ids := make([]int64, len(ws))
	score := make(map[int64]float64, len(ws))
	for i, w := range ws {
		ids[i] = w.docID
		score[w.docID] = w.score
	}
	query := `SELECT d.doc_id, d.seq, d.type, d.time, d.surface, d.codepoint_length, ` + headerColumns + `
		FROM persisted_docs d
		JOIN (SELECT session_key, session_id, version, created_at, cwd, parent_session, seed_length, delegation_depth,
			agent_preset, 0 AS live, 1 AS persisted FROM persisted_sessions) c ON c.session_key = d.doc_id >> ` + strconv.Itoa(docBits) + `
		WHERE d.doc_id IN (SELECT value FROM json_each(?)) AND c.session_id NOT IN (SELECT session_id FROM live_sessions)` + sp.where()
	rows, err := q.QueryContext(ctx, query, append([]any{idList(ids)}, sp.args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		c := candidate{persisted: true}
		dest := append([]any{&c.docID, &c.seq, &c.typ, &c.time, &c.surface, &c.length}, scanHeader(&c.header)...)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		c.score = score[c.docID]
		out = append(out, c)
	}
	return out, rows.Err()
}

// persistedEvents returns one page of a persisted session's matches.
func persistedEvents(ctx context.Context, q querier, match string, ep predicates, key int64, limit, offset int64) ([]candidate, error) {
	query := `SELECT persisted_fts.rowid, d.seq, d.type, d.time, d.surface
		FROM persisted_fts JOIN persisted_docs d ON d.doc_id = persisted_fts.rowid
		WHERE persisted_fts MATCH ? AND persisted_fts.rowid BETWEEN ? AND ?` + ep.where() + `
		ORDER BY persisted_fts.rank, persisted_fts.rowid
		LIMIT ? OFFSET ?`
	args := append([]any{match, key << docBits, key<<docBits | docMask}, ep.args...)
	args = append(args, limit, offset)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		c := candidate{persisted: true}
		if err := rows.Scan(&c.docID, &c.seq, &c.typ, &c.time, &c.surface); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// snippet cuts one document to size around its first match. All a
// snippet uses of the highlights is where the first span starts, which
// searchtext finds as FTS5's highlight() would, for any text, without
// FTS5 (whose highlight() costs matches x length and never checks for an
// interrupt).
func snippet(ctx context.Context, q querier, c candidate, match string, maxChars int) (string, error) {
	docs := "persisted_docs"
	if c.live {
		docs = "live_docs"
	}
	var text string
	if err := q.QueryRowContext(ctx, `SELECT text FROM `+docs+` WHERE doc_id = ?`, c.docID).Scan(&text); err != nil {
		return "", err
	}
	at, ok := searchtext.Segment(text).FirstMatch(phraseForms(match))
	if !ok {
		at = -1
	}
	return makeSnippet(markFirst(text, at), maxChars), nil
}

func hit(c candidate, sessionID, snip string) sessionquery.EventHit {
	return sessionquery.EventHit{
		EventRecord: sessionquery.EventRecord{SessionID: sessionID, Seq: c.seq, Type: c.typ, Time: c.time, Surface: c.surface},
		Snippet:     snip,
	}
}
