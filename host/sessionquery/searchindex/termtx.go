package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
)

// defaultTrackMin is the document frequency at which a term is tracked:
// from then on every write keeps its summaries (terms.go). A query whose
// phrases hold an untracked term matches fewer than that many documents
// per such phrase, which FTS5 ranks in a few milliseconds; a query of
// tracked terms only is ranked from the summaries (ranking.go).
const defaultTrackMin = 2000

// trackedTerms is the tracked vocabulary as one transaction read it.
// Terms are never untracked and a promoted term takes the next id, so a
// later vocabulary is an earlier one plus the terms of larger ids.
type trackedTerms struct {
	version int64
	ids     map[string]int64
	byID    []string // the terms in id order
}

// maxID is the vocabulary's largest term id (0 when it is empty).
func (t *trackedTerms) maxID() int64 {
	if len(t.byID) == 0 {
		return 0
	}
	return t.ids[t.byID[len(t.byID)-1]]
}

// extends reports whether the transaction's vocabulary is old plus terms
// tracked since (not, say, the vocabulary of an index rebuilt meanwhile),
// working it out once per old vocabulary in a transaction.
func (tx *termTx) extends(old *trackedTerms) bool {
	if ok, known := tx.extended[old]; known {
		return ok
	}
	ok := old.maxID() <= tx.tracked.maxID()
	for term, id := range old.ids {
		if !ok {
			break
		}
		ok = tx.tracked.ids[term] == id
	}
	if tx.extended == nil {
		tx.extended = map[*trackedTerms]bool{}
	}
	tx.extended[old] = ok
	return ok
}

// since returns the terms tracked after vocabulary old was read.
func (t *trackedTerms) since(old *trackedTerms) []string {
	i, last := len(t.byID), old.maxID()
	for i > 0 && t.ids[t.byID[i-1]] > last {
		i--
	}
	return t.byID[i:]
}

// loadTracked returns the tracked vocabulary, reading it again only when
// another writer promoted a term since (terms_version).
func loadTracked(ctx context.Context, q querier, cached *trackedTerms) (*trackedTerms, error) {
	var version int64
	if err := q.QueryRowContext(ctx, `SELECT terms_version FROM search_state WHERE singleton = 1`).Scan(&version); err != nil {
		return nil, err
	}
	if cached != nil && cached.version == version {
		return cached, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT term_id, term FROM tracked_terms ORDER BY term_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &trackedTerms{version: version, ids: map[string]int64{}}
	for rows.Next() {
		var id int64
		var term string
		if err := rows.Scan(&id, &term); err != nil {
			return nil, err
		}
		t.ids[term] = id
		t.byID = append(t.byID, term)
	}
	return t, rows.Err()
}

// trackedID looks term up in the tracked vocabulary as q sees it (one
// indexed read, where loadTracked reads the whole vocabulary): its id, and
// whether it is tracked.
func trackedID(ctx context.Context, q querier, term string) (int64, bool, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT term_id FROM tracked_terms WHERE term = ?`, term).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// blockRef names one stored block: a tracked term and a block of session
// keys (key >> blockBits).
type blockRef struct{ term, block int64 }

// id is the block's rowid in term_sessions.
func (r blockRef) id() int64 { return r.term<<32 | r.block }

// blockEdit is one block as a transaction changes it.
type blockEdit struct {
	entries []blockEntry // in key order
	dirty   bool
	used    bool // by the running transaction (see keptBlocks)
}

// termTx maintains the term summaries within one write transaction: the
// edits are collected per block and written by flush, before the FTS
// operations (see txWriter).
type termTx struct {
	c       querier // the write statements' cache (see cached)
	tracked *trackedTerms
	// extended memoizes extends.
	extended map[*trackedTerms]bool
	blocks   map[blockRef]*blockEdit
	kept     *keptBlocks // a private file's (blocks is then kept.blocks)
	bulk     *bulkTerms  // nil unless this process fills an index it found empty
	phrases  *cachedPhrases
	// phraseDocs are the recorded phrases' document lists the transaction
	// read or changed, and phraseDF each phrase's count of documents
	// added (+) and removed (-).
	phraseDocs map[phraseSession]*phraseDocs
	phraseDF   map[int]int64
	held       []int
	removed    []removedDoc // noted by removedDoc, not taken out yet
	scratch    termScratch
}

func (tx *termTx) block(ctx context.Context, ref blockRef) (*blockEdit, error) {
	if b, ok := tx.blocks[ref]; ok {
		b.used = true
		return b, nil
	}
	if tx.kept.past(ref) {
		b := &blockEdit{used: true}
		tx.blocks[ref] = b
		return b, nil
	}
	var buf []byte
	err := tx.c.QueryRowContext(ctx, `SELECT entries FROM term_sessions WHERE id = ?`, ref.id()).Scan(&buf)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	b := &blockEdit{used: true}
	if b.entries, err = decodeEntries(buf); err != nil {
		return nil, err
	}
	if tx.blocks == nil {
		tx.blocks = map[blockRef]*blockEdit{}
	}
	tx.blocks[ref] = b
	return b, nil
}

// find returns the index of key's entry, or where it would go.
func (b *blockEdit) find(key int64) (int, bool) {
	return slices.BinarySearchFunc(b.entries, key, func(e blockEntry, k int64) int { return cmpInt(e.key, k) })
}

// entryOf returns the block holding session key's entry of tracked term id
// and the entry's index in it (found), or where it would go.
func (tx *termTx) entryOf(ctx context.Context, id, key int64) (b *blockEdit, i int, found bool, err error) {
	if b, err = tx.block(ctx, blockRef{id, key >> blockBits}); err != nil {
		return nil, 0, false, err
	}
	i, found = b.find(key)
	return b, i, found, nil
}

// removeSession drops session key's entries of the given terms (those of
// its documents being removed).
func (tx *termTx) removeSession(ctx context.Context, key int64, terms map[string]int32) error {
	for term, docs := range terms {
		tx.bulk.add(term, -int64(docs))
		id, ok := tx.tracked.ids[term]
		if !ok {
			continue
		}
		b, i, found, err := tx.entryOf(ctx, id, key)
		if err != nil {
			return err
		}
		if found {
			b.entries = slices.Delete(b.entries, i, i+1)
			b.dirty = true
		}
	}
	return nil
}

// relabelSession moves the points of session key's documents that were
// renumbered (rows with prev set) to their new rowids. Renumbering keeps
// the documents' order among themselves and after the session's other
// documents, so every tie between points resolves as before and the
// frontier itself is unchanged: only the labels move.
func (tx *termTx) relabelSession(ctx context.Context, key int64, rows []docRow) error {
	moved := map[int64]int64{}
	terms := map[string]int32{}
	phrases := map[int]bool{}
	for _, r := range rows {
		if r.prev == 0 {
			continue
		}
		moved[r.prev] = r.local
		removedTerms(r.form, &tx.scratch, terms)
		for _, i := range tx.phrases.held(tx.scratch.toks, tx.held) {
			phrases[i] = true
		}
	}
	if err := tx.relabelPhraseDocs(ctx, key, moved, phrases); err != nil {
		return err
	}
	for term := range terms {
		id, ok := tx.tracked.ids[term]
		if !ok {
			continue
		}
		b, i, found, err := tx.entryOf(ctx, id, key)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		for k, p := range b.entries[i].points {
			if to, ok := moved[p.local]; ok {
				b.entries[i].points[k].local = to
				b.dirty = true
			}
		}
	}
	return nil
}

// removedDoc notes a removed document (its rowid and tokens) for
// takeRemoved, which takes it out of the recorded phrases it holds.
func (tx *termTx) removedDoc(id int64, toks []searchtext.Token) {
	if tx.held = tx.phrases.held(toks, tx.held); len(tx.held) > 0 {
		tx.removed = append(tx.removed, removedDoc{id, slices.Clone(tx.held)})
	}
}

// removedDoc is a removed document and the recorded phrases it holds.
type removedDoc struct {
	id   int64
	held []int
}

// takeRemoved takes the documents removedDoc noted out of the recorded
// phrases.
func (tx *termTx) takeRemoved(ctx context.Context) error {
	for _, r := range tx.removed {
		if err := tx.removePhraseDoc(ctx, r.id>>docBits, r.id&docMask, r.held); err != nil {
			return err
		}
	}
	tx.removed = tx.removed[:0]
	return nil
}

// addSession adds documents of session key (all of them, or appended
// ones), rows with terms st, to the entries of its tracked terms and the
// recorded phrases.
func (tx *termTx) addSession(ctx context.Context, key int64, st *sessionTerms, rows []docRow) error {
	if !st.cutTo(tx.tracked, tx.extends) {
		// Cut to a vocabulary that has grown since by a term of the
		// session's: summarized again, whole (its terms were counted
		// when it was first summarized).
		st = summarize(rows, nil, nil)
	}
	if err := tx.addPhraseDocs(ctx, key, rows, st); err != nil {
		return err
	}
	add := func(id int64, e *termEntry) error {
		b, i, found, err := tx.entryOf(ctx, id, key)
		if err != nil {
			return err
		}
		if found {
			b.entries[i].merge(e)
		} else {
			b.entries = slices.Insert(b.entries, i, blockEntry{key: key, termEntry: termEntry{docs: e.docs, points: slices.Clone(e.points)}})
		}
		b.dirty = true
		return nil
	}
	if len(tx.tracked.ids) < st.len() {
		for term, id := range tx.tracked.ids {
			if i, ok := st.find(term); ok {
				e := st.entry(i)
				if err := add(id, &e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := range st.len() {
		if id, ok := tx.tracked.ids[st.term(i)]; ok {
			e := st.entry(i)
			if err := add(id, &e); err != nil {
				return err
			}
		}
	}
	return nil
}

// bulkTerms counts the documents per term while a process fills an index
// it found empty (a first build or a rebuild), on the goroutines that read
// the logs: a term is promoted by the first transaction after it reaches
// trackMin, at the cost of its first trackMin or so documents, rather than
// by the first search for it at the cost of all of them. The counts cover
// this process's writes only; a term they miss is still promoted by the
// first search that needs it (promoteQueryTerms).
type bulkTerms struct {
	mu       sync.Mutex
	trackMin int64
	counts   map[uint64]int64 // by the term's hash (see addLocked)
	promote  []string
}

func newBulkTerms(trackMin int64) *bulkTerms {
	return &bulkTerms{trackMin: trackMin, counts: map[uint64]int64{}}
}

// add counts delta documents of term.
func (b *bulkTerms) add(term string, delta int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addLocked(term, delta)
}

func (b *bulkTerms) addLocked(term string, delta int64) {
	// Terms are counted by their 64-bit hash: the map holds no string
	// (no copy of every term of the corpus, nothing for the collector to
	// scan) and a lookup compares none. Terms whose hashes collide share
	// a count, so one may be promoted early: that costs its summaries,
	// which are exact at any count, and changes no result.
	h := maphash.String(termSeed, term)
	before := b.counts[h]
	b.counts[h] = before + delta
	if before < b.trackMin && before+delta >= b.trackMin {
		b.promote = append(b.promote, strings.Clone(term))
	}
}

// counter returns the function summarize tells a session's terms to,
// or nil when nothing is counted. A session's terms are counted under one
// lock.
func (b *bulkTerms) counter() func(terms []string, entries []termEntry) {
	if b == nil {
		return nil
	}
	return func(terms []string, entries []termEntry) {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, term := range terms {
			b.addLocked(term, int64(entries[i].docs))
		}
	}
}

// take returns the terms to promote, once.
func (b *bulkTerms) take() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.promote
	b.promote = nil
	return out
}

// flush writes the changed blocks and phrase counts.
func (tx *termTx) flush(ctx context.Context) error {
	if err := tx.flushPhrases(ctx); err != nil {
		return err
	}
	refs := make([]blockRef, 0, len(tx.blocks))
	for ref, b := range tx.blocks {
		if b.dirty {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b blockRef) int {
		if c := cmpInt(a.term, b.term); c != 0 {
			return c
		}
		return cmpInt(a.block, b.block)
	})
	for _, ref := range refs {
		b := tx.blocks[ref]
		var err error
		if len(b.entries) == 0 {
			_, err = tx.c.ExecContext(ctx, `DELETE FROM term_sessions WHERE id = ?`, ref.id())
		} else {
			_, err = tx.c.ExecContext(ctx, `INSERT OR REPLACE INTO term_sessions(id, entries) VALUES (?, ?)`,
				ref.id(), encodeBlock(b.entries))
			tx.kept.stored(ref)
		}
		if err != nil {
			return err
		}
		b.dirty = false
	}
	return nil
}

// promoteTerm starts tracking term: its summaries are built from the FTS5
// index as it stands in the transaction (every document holding it, with
// its frequency and length), and from then on every write keeps them. It
// is a no-op for a term already tracked. It returns the term's blocks
// as a promotion leaves them: its id and its last block (-1: none); a
// no-op returns term 0, which no tracked term has.
func promoteTerm(ctx context.Context, c *sql.Conn, term string) (promoted blockRef, err error) {
	promoted.block = -1
	if _, tracked, err := trackedID(ctx, c, term); tracked || err != nil {
		return promoted, err
	}
	if err := c.QueryRowContext(ctx, `INSERT INTO tracked_terms(term) VALUES (?) RETURNING term_id`, term).Scan(&promoted.term); err != nil {
		return promoted, err
	}
	id := promoted.term
	entries, err := termEntries(ctx, c, term)
	if err != nil {
		return promoted, err
	}
	for start := 0; start < len(entries); {
		block := entries[start].key >> blockBits
		end := start
		for end < len(entries) && entries[end].key>>blockBits == block {
			end++
		}
		ref := blockRef{id, block}
		if _, err := c.ExecContext(ctx, `INSERT OR REPLACE INTO term_sessions(id, entries) VALUES (?, ?)`, ref.id(), encodeBlock(entries[start:end])); err != nil {
			return promoted, err
		}
		promoted.block = block
		start = end
	}
	if _, err := c.ExecContext(ctx, `UPDATE search_state SET terms_version = terms_version + 1 WHERE singleton = 1`); err != nil {
		return promoted, fmt.Errorf("promote %q: %w", term, err)
	}
	return promoted, nil
}

// termEntries builds term's entries afresh from the FTS5 index (every
// document holding it, with its frequency and length), in session key
// order.
func termEntries(ctx context.Context, q querier, term string) ([]blockEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT v.doc, count(*), s.sz FROM temp.persisted_vocab_instance v
		JOIN persisted_fts_docsize s ON s.id = v.doc WHERE v.term = ? GROUP BY v.doc ORDER BY v.doc`, term)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var entries []blockEntry
	for rows.Next() {
		var doc int64
		var tf int32
		var sz []byte
		if err := rows.Scan(&doc, &tf, &sz); err != nil {
			return nil, err
		}
		key := doc >> docBits
		if n := len(entries); n == 0 || entries[n-1].key != key {
			entries = append(entries, blockEntry{key: key})
		}
		entries[len(entries)-1].add(termPoint{tf: tf, dl: int32(docTokens(sz)), local: doc & docMask})
	}
	return entries, rows.Err()
}

// termTx starts the term summaries' part of a write transaction.
func (ix *Index) termTx(ctx context.Context) (*termTx, error) {
	tracked, err := loadTracked(ctx, ix.db, ix.tracked.Load())
	if err != nil {
		return nil, err
	}
	ix.tracked.Store(tracked)
	phrases, err := loadPhrases(ctx, ix.db, ix.phrases)
	if err != nil {
		return nil, err
	}
	ix.phrases = phrases
	tx := &termTx{c: cached{d: ix.db, write: true}, tracked: tracked, bulk: ix.bulk, phrases: phrases,
		phraseDocs: map[phraseSession]*phraseDocs{}, phraseDF: map[int]int64{}}
	if ix.private {
		if ix.kept == nil {
			ix.kept = &keptBlocks{blocks: map[blockRef]*blockEdit{}, last: map[int64]int64{}}
		}
		tx.kept, tx.blocks = ix.kept, ix.kept.blocks
	}
	return tx, nil
}

// promote promotes term (promoteTerm) and, in a private file, keeps its
// last block.
func (tx *termTx) promote(ctx context.Context, c *sql.Conn, term string) error {
	promoted, err := promoteTerm(ctx, c, term)
	if err == nil && tx.kept != nil && promoted.term != 0 {
		tx.kept.last[promoted.term] = promoted.block
	}
	return err
}

// keptBlocks are what a private file's transactions keep of its term
// summary blocks. A rebuild adds sessions in key order, so a batch ends in
// the middle of a block of each of its common terms, which the next batch
// goes on filling: a transaction of a file that only this writer writes
// starts with the blocks the previous one used (what it wrote, flush),
// instead of reading and decoding them again, and knows each term's last
// stored block (as flush and promoteTerm leave it), past which it reads
// nothing: most blocks a build writes are new.
type keptBlocks struct {
	blocks map[blockRef]*blockEdit
	last   map[int64]int64 // per tracked term, where known
}

// past reports whether ref lies past its term's last stored block, so
// that it is not stored (false for a nil k or an unknown term).
func (k *keptBlocks) past(ref blockRef) bool {
	if k == nil {
		return false
	}
	last, ok := k.last[ref.term]
	return ok && ref.block > last
}

// stored notes that block ref was written.
func (k *keptBlocks) stored(ref blockRef) {
	if k.past(ref) {
		k.last[ref.term] = ref.block
	}
}

// endTransaction ends a private file's transaction for the blocks it
// keeps: a committed transaction's unused blocks are dropped (they are
// complete: their sessions are written), a failed one's all, and the last
// blocks with them (they hold what was rolled back).
func (ix *Index) endTransaction(committed bool) {
	if ix.kept == nil {
		return
	}
	if !committed {
		ix.kept = nil
		return
	}
	for ref, b := range ix.kept.blocks {
		if !b.used {
			delete(ix.kept.blocks, ref)
		}
		b.used = false
	}
}

// prepareQuery readies the index for a search: it tracks the query's
// terms that have become common since the index last looked (a term is
// counted as it is written only while an empty index is filled, see
// bulkTerms), so the first search for such a term pays for its summaries
// once and FTS5 no longer scores its every match on each search; and for
// a query of several phrases it records the document frequency of each
// phrase of tracked terms (phrases.go). A term's document count comes
// from the FTS5 vocabulary at about one read per document holding it, so
// a rare term costs little to look up.
func (ix *Index) prepareQuery(ctx context.Context, match string) error {
	forms := phraseForms(match)
	var common []string
	tracked := map[string]bool{}
	for _, form := range forms {
		for _, t := range phraseTokens(form) {
			if _, seen := tracked[t]; seen {
				continue
			}
			_, ok, err := trackedID(ctx, ix.db, t)
			if err != nil {
				return err
			}
			if ok {
				tracked[t] = true
				continue
			}
			var df int64
			err = ix.db.QueryRowContext(ctx, `SELECT doc FROM temp.persisted_vocab_row WHERE term = ?`, t).Scan(&df)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			tracked[t] = df >= ix.trackMin
			if tracked[t] {
				common = append(common, t)
			}
		}
	}
	var record [][]string
	var matches []string
	if len(forms) > 1 {
		quoted := matchPhrases(match)
		for i, form := range forms {
			tokens := phraseTokens(form)
			if len(tokens) < 2 || slices.ContainsFunc(tokens, func(t string) bool { return !tracked[t] }) {
				continue
			}
			if _, ok, err := recordedPhrase(ctx, ix.db, tokens); ok || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			record, matches = append(record, tokens), append(matches, quoted[i])
		}
	}
	if len(common) == 0 && len(record) == 0 {
		return nil
	}
	return ix.db.immediate(ctx, func() error {
		for _, t := range common {
			if _, err := promoteTerm(ctx, ix.db.conn, t); err != nil {
				return err
			}
		}
		for i, tokens := range record {
			if err := recordPhrase(ctx, ix.db.conn, matches[i], tokens); err != nil {
				return err
			}
		}
		return nil
	})
}
