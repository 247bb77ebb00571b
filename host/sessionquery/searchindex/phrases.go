package searchindex

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
)

// Phrase statistics: for phrases of tracked terms that searches needed,
// which documents hold each, by session, kept exact by every write.
//
// A query of several phrases (a camel-case identifier: its parts OR its
// whole, see quoteFTS) ranks by each phrase's idf, so it needs the number
// of documents holding each phrase. A tracked term's is the sum of its
// summaries' counts and a rare phrase's is the number of its matches, read
// anyway; but a phrase of several tracked terms ("parse workspace
// manifest") is found by intersecting their long position lists, which
// costs most of such a search. The first search that needs such a phrase
// finds its documents once, in a write transaction, and records them here
// (phrase_sessions: each session's documents holding it, with the
// phrase's frequency in each and each one's length in tokens;
// phrase_stats: how many documents in all); from then on every write adds
// and removes the documents it inserts and removes that hold the phrase,
// and moves those it renumbers, so the records stay exact across writes by
// any process, and later searches read them. A ranking then knows every
// match of the phrase and its bm25 inputs without FTS5 (ranking.go): a
// session holding the phrase's terms apart only is no candidate, and a
// candidate is made exact from the records alone. At most maxPhrases are
// kept, the oldest dropped first.
const maxPhrases = 64

// phraseKey is a phrase's tokens joined by spaces (tokens hold none).
func phraseKey(tokens []string) string { return strings.Join(tokens, " ") }

// cachedPhrases are the recorded phrases as one transaction read them.
type cachedPhrases struct {
	version int64
	ids     []int64
	tokens  [][]string
}

// loadPhrases returns the recorded phrases, reading them again only when
// a search recorded or dropped one since (phrases_version).
func loadPhrases(ctx context.Context, q querier, cached *cachedPhrases) (*cachedPhrases, error) {
	var version int64
	if err := q.QueryRowContext(ctx, `SELECT phrases_version FROM search_state WHERE singleton = 1`).Scan(&version); err != nil {
		return nil, err
	}
	if cached != nil && cached.version == version {
		return cached, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT id, phrase FROM phrase_stats ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p := &cachedPhrases{version: version}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return nil, err
		}
		p.ids = append(p.ids, id)
		p.tokens = append(p.tokens, strings.Split(key, " "))
	}
	return p, rows.Err()
}

// held returns the recorded phrases (by index) that toks, one document's
// tokens, hold, into out.
func (p *cachedPhrases) held(toks []searchtext.Token, out []int) []int {
	out = out[:0]
	for i, tokens := range p.tokens {
		if countPhrase(toks, tokens) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// phraseSession names one recorded phrase (by its index in cachedPhrases)
// in one session.
type phraseSession struct {
	phrase int
	key    int64
}

// phraseHit is one document holding a phrase: its rowid (local, within
// its session, where a transaction keeps it), the phrase's frequency in it
// and its length in tokens, bm25's inputs.
type phraseHit struct {
	id    int64
	f, dl int32
}

// phraseDocs is one recorded phrase's documents in one session (in rowid
// order) as a write transaction changes them.
type phraseDocs struct {
	hits   []phraseHit
	stored bool // phrase_sessions has a row for them
	dirty  bool
}

var errBadPhraseDocs = &damagedError{err: errors.New("malformed phrase document list")}

// encodeHits writes hits as varints: each local rowid as its two parts (see
// encodeBlock), the frequency and the length.
func encodeHits(hits []phraseHit) []byte {
	buf := make([]byte, 0, 5*len(hits))
	for _, h := range hits {
		buf = binary.AppendUvarint(buf, uint64(h.id>>ordBits))
		buf = binary.AppendUvarint(buf, uint64(maxOrdinal-h.id&maxOrdinal))
		buf = binary.AppendUvarint(buf, uint64(h.f))
		buf = binary.AppendUvarint(buf, uint64(h.dl))
	}
	return buf
}

// decodeHits reads what encodeHits wrote, as documents of session key
// (appended to out).
func decodeHits(buf []byte, key int64, out []phraseHit) ([]phraseHit, error) {
	r := uvarints{buf: buf}
	for r.i < len(r.buf) {
		length, ordinal, f, dl := r.next(), r.next(), r.next(), r.next()
		if r.bad || length > maxLength || ordinal > maxOrdinal || f == 0 || f > math.MaxInt32 || dl > math.MaxInt32 {
			return out, errBadPhraseDocs
		}
		out = append(out, phraseHit{id: key<<docBits | localRowid(int(length), int(ordinal)), f: int32(f), dl: int32(dl)})
	}
	return out, nil
}

func compareHits(a, b phraseHit) int { return cmpInt(a.id, b.id) }

// phraseDocsOf returns recorded phrase i's documents in session key, read
// once per transaction.
func (tx *termTx) phraseDocsOf(ctx context.Context, i int, key int64) (*phraseDocs, error) {
	ps := phraseSession{i, key}
	if d, ok := tx.phraseDocs[ps]; ok {
		return d, nil
	}
	hits, err := recordedHits(ctx, tx.c, tx.phrases.ids[i], key, nil)
	if err != nil {
		return nil, err
	}
	for k := range hits {
		hits[k].id &= docMask // local, as the transaction keeps them
	}
	// A stored list is never empty (flushPhrases deletes it instead).
	d := &phraseDocs{hits: hits, stored: len(hits) > 0}
	tx.phraseDocs[ps] = d
	return d, nil
}

// removePhraseDoc takes document local of session key out of the
// recorded phrases of held.
func (tx *termTx) removePhraseDoc(ctx context.Context, key, local int64, held []int) error {
	for _, i := range held {
		d, err := tx.phraseDocsOf(ctx, i, key)
		if err != nil {
			return err
		}
		if at, found := slices.BinarySearchFunc(d.hits, phraseHit{id: local}, compareHits); found {
			d.hits, d.dirty = slices.Delete(d.hits, at, at+1), true
			tx.phraseDF[i]--
		}
	}
	return nil
}

// addPhraseDocs adds rows, documents of session key whose terms are st, to
// the recorded phrases they hold: a session that lacks one of a phrase's
// terms is not tokenized for it.
func (tx *termTx) addPhraseDocs(ctx context.Context, key int64, rows []docRow, st *sessionTerms) error {
	var need []int
	for i, tokens := range tx.phrases.tokens {
		if !slices.ContainsFunc(tokens, func(t string) bool { _, ok := st.find(t); return !ok }) {
			need = append(need, i)
		}
	}
	if len(need) == 0 {
		return nil
	}
	for _, r := range rows {
		tx.scratch.toks = searchtext.Tokens(tx.scratch.toks[:0], r.form)
		for _, i := range need {
			f := countPhrase(tx.scratch.toks, tx.phrases.tokens[i])
			if f == 0 {
				continue
			}
			d, err := tx.phraseDocsOf(ctx, i, key)
			if err != nil {
				return err
			}
			h := phraseHit{id: r.local, f: f, dl: int32(len(tx.scratch.toks))}
			at, found := slices.BinarySearchFunc(d.hits, h, compareHits)
			if found {
				d.hits[at] = h
			} else {
				d.hits = slices.Insert(d.hits, at, h)
				tx.phraseDF[i]++
			}
			d.dirty = true
		}
	}
	return nil
}

// relabelPhraseDocs moves the renumbered documents of session key (moved:
// former local rowid to new) in the recorded phrases of held, those the
// moved documents hold.
func (tx *termTx) relabelPhraseDocs(ctx context.Context, key int64, moved map[int64]int64, held map[int]bool) error {
	for i := range held {
		d, err := tx.phraseDocsOf(ctx, i, key)
		if err != nil {
			return err
		}
		for k, h := range d.hits {
			if to, ok := moved[h.id]; ok {
				d.hits[k].id, d.dirty = to, true
			}
		}
		slices.SortFunc(d.hits, compareHits)
	}
	return nil
}

// flushPhrases writes the recorded phrases' changed document lists and
// counts (a session left with none is dropped).
func (tx *termTx) flushPhrases(ctx context.Context) error {
	for ps, d := range tx.phraseDocs {
		if !d.dirty {
			continue
		}
		id := tx.phrases.ids[ps.phrase]
		var err error
		switch {
		case len(d.hits) > 0:
			_, err = tx.c.ExecContext(ctx, `INSERT OR REPLACE INTO phrase_sessions(phrase_id, session_key, docs) VALUES (?, ?, ?)`, id, ps.key, encodeHits(d.hits))
		case d.stored:
			_, err = tx.c.ExecContext(ctx, `DELETE FROM phrase_sessions WHERE phrase_id = ? AND session_key = ?`, id, ps.key)
		}
		if err != nil {
			return err
		}
	}
	for i, n := range tx.phraseDF {
		if n == 0 {
			continue
		}
		if _, err := tx.c.ExecContext(ctx, `UPDATE phrase_stats SET df = df + ? WHERE id = ?`, n, tx.phrases.ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// phraseRecord is a recorded phrase as a search reads it: its id and
// document frequency, and once readDocs read them, the documents holding
// it by session.
type phraseRecord struct {
	id, df int64
	hits   map[int64][]phraseHit
}

// recordedPhrase returns a phrase's record, without its documents; false
// when it is not recorded.
func recordedPhrase(ctx context.Context, q querier, tokens []string) (phraseRecord, bool, error) {
	var r phraseRecord
	err := q.QueryRowContext(ctx, `SELECT id, df FROM phrase_stats WHERE phrase = ?`, phraseKey(tokens)).Scan(&r.id, &r.df)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// readDocs reads the record's documents of the sessions allowed admits
// (all of them when it is nil) into r.hits.
func (r *phraseRecord) readDocs(ctx context.Context, q querier, allowed map[int64]bool) error {
	rows, err := q.QueryContext(ctx, `SELECT session_key, docs FROM phrase_sessions WHERE phrase_id = ?`, r.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.hits = map[int64][]phraseHit{}
	var arena []phraseHit
	for rows.Next() {
		var key int64
		var buf sql.RawBytes
		if err := rows.Scan(&key, &buf); err != nil {
			return err
		}
		if allowed != nil && !allowed[key] {
			continue
		}
		// The sessions' hits share arenas rather than one allocation each.
		if cap(arena)-len(arena) < len(buf)/4 {
			arena = make([]phraseHit, 0, max(1024, len(buf)/4))
		}
		start := len(arena)
		if arena, err = decodeHits(buf, key, arena); err != nil {
			return err
		}
		r.hits[key] = arena[start:len(arena):len(arena)]
	}
	return rows.Err()
}

// recordedHits returns the documents of session key holding recorded
// phrase id.
func recordedHits(ctx context.Context, q querier, id, key int64, out []phraseHit) ([]phraseHit, error) {
	var buf sql.RawBytes
	rows, err := q.QueryContext(ctx, `SELECT docs FROM phrase_sessions WHERE phrase_id = ? AND session_key = ?`, id, key)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&buf); err != nil {
			return out, err
		}
		if out, err = decodeHits(buf, key, out); err != nil {
			return out, err
		}
	}
	return out, rows.Err()
}

// recordPhrase finds a phrase's documents and records them, in the
// caller's write transaction (so no write can slip between the reading
// and the record), dropping the oldest recorded phrase past maxPhrases.
// Each document's frequency of the phrase is recovered from FTS5's score
// of it (see matchHits).
func recordPhrase(ctx context.Context, c *sql.Conn, match string, tokens []string) error {
	if _, ok, err := recordedPhrase(ctx, c, tokens); ok || err != nil {
		return err
	}
	rows, total, err := tableTotals(ctx, c, "persisted_fts_data")
	if err != nil {
		return err
	}
	hits, err := matchHits(ctx, c, match, bm25Stats{rows: rows, tokens: total})
	if err != nil {
		return err
	}
	for i, h := range hits {
		if h.f > 0 {
			continue
		}
		// Not recovered exactly: counted in the document's text.
		var text string
		if err := c.QueryRowContext(ctx, `SELECT text FROM persisted_docs WHERE doc_id = ?`, h.id).Scan(&text); err != nil {
			return err
		}
		toks := textTokens(nil, text)
		hits[i].f, hits[i].dl = countPhrase(toks, tokens), int32(len(toks))
	}
	r, err := c.ExecContext(ctx, `INSERT INTO phrase_stats(phrase, df) VALUES (?, ?)`, phraseKey(tokens), len(hits))
	if err != nil {
		return err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return err
	}
	insert, err := c.PrepareContext(ctx, `INSERT INTO phrase_sessions(phrase_id, session_key, docs) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insert.Close()
	for start := 0; start < len(hits); {
		key := hits[start].id >> docBits
		end := start
		for end < len(hits) && hits[end].id>>docBits == key {
			hits[end].id &= docMask
			end++
		}
		if _, err := insert.ExecContext(ctx, id, key, encodeHits(hits[start:end])); err != nil {
			return err
		}
		start = end
	}
	// The oldest past maxPhrases go, their documents first.
	const dropped = `(SELECT id FROM phrase_stats ORDER BY id DESC LIMIT -1 OFFSET ?)`
	if _, err := c.ExecContext(ctx, `DELETE FROM phrase_sessions WHERE phrase_id IN `+dropped, maxPhrases); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, `DELETE FROM phrase_stats WHERE id IN `+dropped, maxPhrases); err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, `UPDATE search_state SET phrases_version = phrases_version + 1 WHERE singleton = 1`)
	return err
}

// matchHits reads every match of one phrase, in rowid order, with its
// length, and recovers the phrase's frequency in each from FTS5's score
// of it (FTS5 scores a one-phrase query by bm25 with the phrase's idf, see
// exactFreq): hits whose frequency the score does not give back exactly
// have f 0. s is the table's row and token counts.
func matchHits(ctx context.Context, q querier, match string, s bm25Stats) ([]phraseHit, error) {
	rows, err := q.QueryContext(ctx, `SELECT f.rowid, f.rank, d.sz FROM persisted_fts f JOIN persisted_fts_docsize d ON d.id = f.rowid
		WHERE persisted_fts MATCH ? ORDER BY f.rowid`, match)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []phraseHit
	var ranks []float64
	for rows.Next() {
		var id int64
		var rank float64
		var sz sql.RawBytes
		if err := rows.Scan(&id, &rank, &sz); err != nil {
			return nil, err
		}
		hits = append(hits, phraseHit{id: id, dl: int32(docTokens(sz))})
		ranks = append(ranks, rank)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.hits = int64(len(hits))
	for i := range hits {
		hits[i].f, _ = exactFreq(ranks[i], hits[i].dl, s)
	}
	return hits, nil
}
