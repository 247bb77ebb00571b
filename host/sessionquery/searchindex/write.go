package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// persistedChange is one inspected log to (re)index. base is the revision
// the decision to inspect was taken against ("" for a session not yet
// indexed): the write only lands if the row still has it, so a slower
// process can never overwrite a newer inspection by another one.
type persistedChange struct {
	header   session.Header
	revision string
	base     string
	events   int
	docs     []docRow
	cat      catalogEntry
	path     string        // the log's location in the backend ("" without files)
	dir      string        // its workspace directory ("" without files)
	extent   []byte        // what the read consumed (store.Extent); nil: not appendable
	terms    *sessionTerms // the documents' term entries (nil: summarized by the writer)
}

// appendChange is what was appended to an indexed log, read on its own
// (see docBits): the new documents and the catalog columns that change.
// Like a persistedChange it only lands if the row still has revision
// base.
type appendChange struct {
	id          string
	key         int64
	revision    string
	base        string
	events      int // the log's events now
	docCount    int // its documents now
	docs        []docRow
	docTimeMax  *int64
	extent      []byte
	logBytes    int64
	lastEventAt int64
	title       *titleColumns // nil: the title did not change

	// renumberAfter, when set, is the time of the earliest of docs,
	// which is older than some documents of the session: those are
	// numbered again with docs (renumberLater).
	renumberAfter *int64
}

// liveChange is one live session to (re)overlay.
type liveChange struct {
	header      session.Header
	fingerprint string
	persisted   bool
	events      int
	docs        []docRow
	cat         catalogEntry
}

// batch is the writes of one transaction.
type batch struct {
	upserts    []persistedChange
	appends    []appendChange
	deletes    []string
	pendingAdd []string
	pendingDel []string
	live       []liveChange
	liveDel    []string
	feed       *feedAdvance
	writersAdd []openWriter
	writersDel []string
	stamps     []store.DirStamp // replaces the stored directory stamps (nil: keep)
	stampsSet  bool
	docs       int
	bytes      int
}

// feedAdvance moves the stored journal cursor, but only if it still is
// where this reconciliation read it (another process may have moved it).
type feedAdvance struct {
	source     string
	fromSource *string
	from       *int64
	to         int64
	boot       string
}

// errFeedMoved reports that another process advanced the journal cursor
// while this one reconciled; the reconciliation starts over from there.
var errFeedMoved = errors.New("the change journal cursor moved")

// Batches are committed once they hold this much, so building a large index
// neither holds every document in memory nor keeps other processes from
// writing for long.
const (
	batchDocs  = 4000
	batchBytes = 8 << 20
)

// full reports whether the batch should be committed.
func (b *batch) full() bool {
	return b.docs >= batchDocs || b.bytes >= batchBytes
}

func (b *batch) empty() bool {
	return len(b.upserts) == 0 && len(b.appends) == 0 && len(b.deletes) == 0 && len(b.pendingAdd) == 0 &&
		len(b.pendingDel) == 0 && len(b.live) == 0 && len(b.liveDel) == 0 && b.feed == nil &&
		len(b.writersAdd) == 0 && len(b.writersDel) == 0 && !b.stampsSet
}

func (b *batch) addUpsert(c persistedChange) {
	b.upserts = append(b.upserts, c)
	b.docs += len(c.docs)
	b.bytes += rowBytes(c.docs)
}

func (b *batch) addAppend(a appendChange) {
	b.appends = append(b.appends, a)
	b.docs += len(a.docs)
	b.bytes += rowBytes(a.docs)
}

func (b *batch) touchesMain() bool {
	return len(b.upserts) > 0 || len(b.appends) > 0 || len(b.deletes) > 0 || len(b.pendingAdd) > 0 || len(b.pendingDel) > 0 || b.feed != nil ||
		len(b.writersAdd) > 0 || len(b.writersDel) > 0 || b.stampsSet
}

// commitResult is what a committed batch changed.
type commitResult struct {
	wrotePersisted bool
	wroteLive      bool
	liveRows       map[string]liveRow
	nextLocal      int64
	nextLiveKey    int64
}

// commit writes b in one transaction: BEGIN IMMEDIATE when it touches the
// shared tables, a deferred BEGIN when it only rewrites this connection's
// live overlay (which takes no lock other processes would wait for).
func (ix *Index) commit(ctx context.Context, b *batch) (commitResult, error) {
	res := commitResult{liveRows: map[string]liveRow{}, nextLocal: ix.nextLocal, nextLiveKey: ix.nextLiveKey}
	if b.empty() {
		return res, nil
	}
	// A transaction that started runs to its end: cancellation is honoured
	// before it, never half-way through it.
	ctx = context.WithoutCancel(ctx)
	db := ix.db
	// Live rows are written to the overlay; a write reads the vocabulary
	// only to promote the terms counted while it fills an empty index.
	switch {
	case len(b.live) > 0 || len(b.liveDel) > 0:
		if err := db.overlay(ctx); err != nil {
			return res, err
		}
	case ix.bulk != nil:
		if err := db.vocab(ctx); err != nil {
			return res, err
		}
	}
	if b.full() {
		if err := db.growCache(ctx); err != nil {
			return res, err
		}
	}
	begin := `BEGIN`
	if b.touchesMain() {
		begin = `BEGIN IMMEDIATE`
	}
	if _, err := db.conn.ExecContext(ctx, begin); err != nil {
		return res, err
	}
	err := ix.writeBatch(ctx, b, &res)
	if err == nil {
		_, err = db.conn.ExecContext(ctx, `COMMIT`)
	}
	ix.endTransaction(err == nil)
	if err != nil {
		_, _ = db.conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		return commitResult{}, err
	}
	return res, nil
}

func (ix *Index) writeBatch(ctx context.Context, b *batch, res *commitResult) error {
	w := newTxWriter(ix.db)
	c := ix.db.conn
	if len(b.upserts) > 0 || len(b.appends) > 0 || len(b.deletes) > 0 {
		tt, err := ix.termTx(ctx)
		if err != nil {
			return err
		}
		w.terms = tt
	}
	if b.feed != nil {
		r, err := c.ExecContext(ctx, `UPDATE search_state SET feed_source = ?, feed_cursor = ?, feed_boot = ?
			WHERE singleton = 1 AND feed_source IS ? AND feed_cursor IS ?`,
			b.feed.source, b.feed.to, b.feed.boot, b.feed.fromSource, b.feed.from)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return errFeedMoved
		}
	}
	var gen int64
	if len(b.upserts) > 0 || len(b.appends) > 0 || len(b.deletes) > 0 {
		if err := c.QueryRowContext(ctx, `UPDATE search_state SET global_generation = global_generation + 1
			WHERE singleton = 1 RETURNING global_generation`).Scan(&gen); err != nil {
			return err
		}
		res.wrotePersisted = true
	}
	for _, id := range b.deletes {
		if err := w.deletePersisted(ctx, id); err != nil {
			return err
		}
	}
	pending := slices.Clone(b.pendingAdd)
	for _, u := range b.upserts {
		landed, err := w.upsertPersisted(ctx, u, gen)
		if err != nil {
			return err
		}
		if !landed {
			pending = append(pending, u.header.ID)
		}
	}
	for _, a := range b.appends {
		landed, err := w.appendPersisted(ctx, a, gen)
		if err != nil {
			return err
		}
		if !landed {
			pending = append(pending, a.id)
		}
	}
	for _, id := range b.pendingDel {
		if slices.Contains(pending, id) {
			continue
		}
		if _, err := c.ExecContext(ctx, `DELETE FROM pending_sessions WHERE session_id = ?`, id); err != nil {
			return err
		}
	}
	for _, id := range pending {
		if _, err := c.ExecContext(ctx, `INSERT OR IGNORE INTO pending_sessions(session_id) VALUES (?)`, id); err != nil {
			return err
		}
	}
	for _, id := range b.writersDel {
		if _, err := c.ExecContext(ctx, `DELETE FROM open_writers WHERE session_id = ?`, id); err != nil {
			return err
		}
	}
	for _, ow := range b.writersAdd {
		if _, err := c.ExecContext(ctx, `INSERT OR REPLACE INTO open_writers(session_id, log_path) VALUES (?, ?)`, ow.id, ow.path); err != nil {
			return err
		}
	}
	if b.stampsSet {
		if _, err := c.ExecContext(ctx, `DELETE FROM workspace_dirs`); err != nil {
			return err
		}
		for _, st := range b.stamps {
			if _, err := c.ExecContext(ctx, `INSERT INTO workspace_dirs(name, mtime) VALUES (?, ?)`, st.Name, st.ModTime); err != nil {
				return err
			}
		}
	}
	if err := ix.writeLive(ctx, w, b, res, gen); err != nil {
		return err
	}
	if w.terms != nil {
		if err := w.terms.flush(ctx); err != nil {
			return err
		}
	}
	if err := w.applyFTS(ctx); err != nil {
		return err
	}
	if w.terms != nil {
		for _, term := range w.terms.bulk.take() {
			if err := w.terms.promote(ctx, c, term); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ix *Index) writeLive(ctx context.Context, w *txWriter, b *batch, res *commitResult, mainGen int64) error {
	if len(b.live) == 0 && len(b.liveDel) == 0 {
		return nil
	}
	c := ix.db.conn
	for _, id := range b.liveDel {
		if row, ok := ix.live[id]; ok {
			if err := w.removeDocs(ctx, liveTables, row.key, nil); err != nil {
				return err
			}
		}
		if _, err := c.ExecContext(ctx, `DELETE FROM live_sessions WHERE session_id = ?`, id); err != nil {
			return err
		}
		res.wroteLive = true
	}
	if len(b.live) == 0 {
		return nil
	}
	if mainGen == 0 {
		mainGen = ix.dbGen
	}
	next := ix.nextLocal
	key := ix.nextLiveKey
	for _, l := range b.live {
		// A session overlaid again keeps its key, so that keys (24 bits
		// of a rowid, see docBits) are only spent on new live sessions.
		var rowKey int64
		if old, ok := ix.live[l.header.ID]; ok {
			if err := w.removeDocs(ctx, liveTables, old.key, nil); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, `DELETE FROM live_sessions WHERE session_key = ?`, old.key); err != nil {
				return err
			}
			rowKey = old.key
		} else {
			key++
			rowKey = key
		}
		if rowKey > maxKey {
			return fmt.Errorf("this process overlaid %d live sessions, the index's limit; restart it", maxKey)
		}
		next = max(next, mainGen) + 1
		h := l.header
		args := append([]any{rowKey, h.ID, h.Version, h.CreatedAt, h.Cwd, h.ParentSession, h.SeedLength, h.DelegationDepth,
			h.AgentPreset, l.fingerprint, l.persisted, next, l.events, len(l.docs)}, l.cat.args()...)
		if _, err := c.ExecContext(ctx, `INSERT INTO live_sessions(session_key, session_id, version, created_at, cwd,
			parent_session, seed_length, delegation_depth, agent_preset, fingerprint, persisted, generation,
			event_count, doc_count, `+catalogNames+`) VALUES (`+placeholders(len(args))+`)`,
			args...); err != nil {
			return err
		}
		if err := w.addDocs(ctx, liveTables, rowKey, l.docs); err != nil {
			return fmt.Errorf("session %s: %w", h.ID, err)
		}
		res.liveRows[h.ID] = liveRow{key: rowKey, fingerprint: l.fingerprint, persisted: l.persisted, generation: next}
	}
	res.wroteLive = true
	res.nextLocal, res.nextLiveKey = next, key
	return nil
}

// tables names one content table and the FTS5 index built over it.
type tables struct{ docs, fts string }

var (
	persistedTables = tables{"persisted_docs", "persisted_fts"}
	liveTables      = tables{"live_docs", "live_fts"}
)

// txWriter writes one transaction. FTS5 flushes its pending in-memory
// index whenever a statement in the transaction opens a statement journal
// (any multi-row or constraint-checked write), which would cut the index
// into tiny segments and spend the build merging them. So every ordinary
// row is written first, and the FTS operations, all single-row statements,
// are queued and applied last: each transaction flushes once, at COMMIT.
type txWriter struct {
	c       *sql.Conn
	db      *database
	ops     []ftsOp
	args    []any
	terms   *termTx // nil when the transaction writes no persisted documents
	scratch termScratch
}

// ftsOp is one queued change to an FTS5 index. text is the indexed form:
// the external-content "delete" command needs the form the row was
// indexed with.
type ftsOp struct {
	fts  string
	del  bool
	id   int64
	text string
}

func newTxWriter(d *database) *txWriter { return &txWriter{c: d.conn, db: d} }

// stmt returns the writer's prepared statement for query (see writeStmt).
func (w *txWriter) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return w.db.writeStmt(ctx, query)
}

// upsertPersisted replaces one session's row and documents, keeping its
// key, unless the row no longer carries the revision the change was based
// on (another process got there first).
func (w *txWriter) upsertPersisted(ctx context.Context, u persistedChange, gen int64) (bool, error) {
	h := u.header
	var key int64
	var current string
	find, err := w.stmt(ctx, `SELECT session_key, revision FROM persisted_sessions WHERE session_id = ?`)
	if err != nil {
		return false, err
	}
	err = find.QueryRowContext(ctx, h.ID).Scan(&key, &current)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if u.base != "" {
			return false, nil
		}
		args := append([]any{h.ID, h.Version, h.CreatedAt, h.Cwd, h.ParentSession, h.SeedLength, h.DelegationDepth, h.AgentPreset,
			u.revision, gen, u.events, len(u.docs), u.path, u.dir, maxDocTime(u.docs), u.extent}, u.cat.args()...)
		insert, err := w.stmt(ctx, `INSERT INTO persisted_sessions(session_id, version, created_at, cwd, parent_session,
			seed_length, delegation_depth, agent_preset, revision, generation, event_count, doc_count, log_path, workspace_dir,
			doc_time_max, log_extent, `+catalogNames+`) VALUES (`+placeholders(len(args))+`) RETURNING session_key`)
		if err != nil {
			return false, err
		}
		if err := insert.QueryRowContext(ctx, args...).Scan(&key); err != nil {
			return false, err
		}
		if key > maxKey {
			return false, fmt.Errorf("the index has numbered %d sessions, its limit; run `dsh index rebuild` to number them again", maxKey)
		}
	case err != nil:
		return false, err
	default:
		if current != u.base {
			return false, nil
		}
		if err := w.removePersistedDocs(ctx, key); err != nil {
			return false, err
		}
		args := append([]any{h.Version, h.CreatedAt, h.Cwd, h.ParentSession, h.SeedLength, h.DelegationDepth, h.AgentPreset,
			u.revision, gen, u.events, len(u.docs), u.path, u.dir, maxDocTime(u.docs), u.extent}, u.cat.args()...)
		if _, err := w.c.ExecContext(ctx, `UPDATE persisted_sessions SET version = ?, created_at = ?, cwd = ?,
			parent_session = ?, seed_length = ?, delegation_depth = ?, agent_preset = ?, revision = ?,
			generation = ?, event_count = ?, doc_count = ?, log_path = ?, workspace_dir = ?, doc_time_max = ?, log_extent = ?,
			header = ?, title = ?, title_error_seq = ?, title_error = ?, last_event_at = ?, log_bytes = ?, unreadable = ?, invalid = ?
			WHERE session_key = ?`, append(args, key)...); err != nil {
			return false, err
		}
	}
	if err := w.addDocs(ctx, persistedTables, key, u.docs); err != nil {
		return false, fmt.Errorf("session %s: %w", h.ID, err)
	}
	terms := u.terms
	if terms == nil {
		terms = summarize(u.docs, nil, w.terms.bulk.counter())
	}
	return true, w.terms.addSession(ctx, key, terms, u.docs)
}

// appendPersisted inserts the documents of events appended to an indexed
// log and updates its catalog row, unless the row no longer carries the
// revision the change was based on.
func (w *txWriter) appendPersisted(ctx context.Context, a appendChange, gen int64) (bool, error) {
	set := `revision = ?, generation = ?, event_count = ?, doc_count = ?, doc_time_max = ?, log_extent = ?,
		log_bytes = ?, last_event_at = ?`
	args := []any{a.revision, gen, a.events, a.docCount, a.docTimeMax, a.extent, a.logBytes, a.lastEventAt}
	if a.title != nil {
		set += `, title = ?, title_error_seq = ?, title_error = ?`
		args = append(args, a.title.title, a.title.errSeq, a.title.err)
	}
	st, err := w.stmt(ctx, `UPDATE persisted_sessions SET `+set+` WHERE session_key = ? AND revision = ?`)
	if err != nil {
		return false, err
	}
	r, err := st.ExecContext(ctx, append(args, a.key, a.base)...)
	if err != nil {
		return false, err
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	docs, appended := a.docs, a.docs
	if a.renumberAfter != nil {
		if docs, err = w.renumberLater(ctx, persistedTables, a.key, *a.renumberAfter, docs); err != nil {
			return false, fmt.Errorf("session %s: %w", a.id, err)
		}
		// The documents taken keep their terms under new rowids; the
		// appended ones are summarized with theirs.
		if err := w.terms.relabelSession(ctx, a.key, docs); err != nil {
			return false, err
		}
		appended = slices.DeleteFunc(slices.Clone(docs), func(r docRow) bool { return r.prev != 0 })
	}
	if err := w.addDocs(ctx, persistedTables, a.key, docs); err != nil {
		return false, fmt.Errorf("session %s: %w", a.id, err)
	}
	return true, w.terms.addSession(ctx, a.key, summarize(appended, nil, w.terms.bulk.counter()), appended)
}

func (w *txWriter) deletePersisted(ctx context.Context, id string) error {
	var key int64
	err := w.c.QueryRowContext(ctx, `SELECT session_key FROM persisted_sessions WHERE session_id = ?`, id).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := w.removePersistedDocs(ctx, key); err != nil {
		return err
	}
	_, err = w.c.ExecContext(ctx, `DELETE FROM persisted_sessions WHERE session_key = ?`, key)
	return err
}

// removePersistedDocs removes one persisted session's documents and its
// entries in the term summaries.
func (w *txWriter) removePersistedDocs(ctx context.Context, key int64) error {
	terms := map[string]int32{}
	if err := w.removeDocs(ctx, persistedTables, key, terms); err != nil {
		return err
	}
	return w.terms.removeSession(ctx, key, terms)
}

// removeDocs deletes one session's content rows and queues their removal
// from the FTS index. terms, when not nil, receives how many of the
// removed documents hold each term.
func (w *txWriter) removeDocs(ctx context.Context, t tables, key int64, terms map[string]int32) error {
	lo, hi := key<<docBits, key<<docBits|docMask
	rows, err := w.c.QueryContext(ctx, `SELECT doc_id, text FROM `+t.docs+` WHERE doc_id BETWEEN ? AND ?`, lo, hi)
	if err != nil {
		return err
	}
	for rows.Next() {
		op := ftsOp{fts: t.fts, del: true}
		var text string
		if err := rows.Scan(&op.id, &text); err != nil {
			rows.Close()
			return err
		}
		// The index tokenized the text's indexed form; a delete must
		// give the same form again.
		op.text = searchtext.Segment(text).Text
		w.ops = append(w.ops, op)
		if terms != nil {
			removedTerms(op.text, &w.scratch, terms)
			w.terms.removedDoc(op.id, w.scratch.toks)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if terms != nil {
		if err := w.terms.takeRemoved(ctx); err != nil {
			return err
		}
	}
	_, err = w.c.ExecContext(ctx, `DELETE FROM `+t.docs+` WHERE doc_id BETWEEN ? AND ?`, lo, hi)
	return err
}

// insertRows is how many documents one content-table INSERT carries: each
// statement is a round trip into SQLite, which costs more than a row.
const insertRows = 64

// addDocs stores a session's rows under key with the local rowids
// prepareDocs or appendedDocs gave them (see docBits), and queues them for
// the FTS index.
func (w *txWriter) addDocs(ctx context.Context, t tables, key int64, docs []docRow) error {
	if len(docs) > maxOrdinal+1 {
		return fmt.Errorf("%d searchable events exceed the index's per-session limit of %d", len(docs), maxOrdinal+1)
	}
	// Rows go in rowid order: SQLite then fills each page before it
	// starts the next, where rows in document order (not rowid order, see
	// docBits) split pages and left the table a quarter empty.
	order := make([]*docRow, len(docs))
	for i := range docs {
		order[i] = &docs[i]
	}
	slices.SortFunc(order, func(a, b *docRow) int { return cmpInt(a.local, b.local) })
	for start := 0; start < len(order); start += insertRows {
		chunk := order[start:min(len(order), start+insertRows)]
		w.args = w.args[:0]
		for _, r := range chunk {
			id := key<<docBits | r.local
			w.args = append(w.args, id, r.seq, r.typ, r.time, r.surface, r.n, r.text)
			w.ops = append(w.ops, ftsOp{fts: t.fts, id: id, text: r.form})
		}
		st, err := w.stmt(ctx, insertDocsSQL(t, len(chunk)))
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, w.args...); err != nil {
			return err
		}
	}
	clear(w.args)
	return nil
}

// insertDocsSQL is the INSERT of n content rows into t.
func insertDocsSQL(t tables, n int) string {
	return `INSERT INTO ` + t.docs + `(doc_id, seq, type, time, surface, codepoint_length, text) VALUES (?, ?, ?, ?, ?, ?, ?)` +
		strings.Repeat(`, (?, ?, ?, ?, ?, ?, ?)`, n-1)
}

// applyFTS runs the queued FTS operations: deletions first, then
// insertions, each in rowid order. FTS5 flushes its in-memory index to a
// new segment whenever a write's rowid is below the previous one's, and a
// session's rowids do not follow its documents' order (see docBits):
// written as they come, nearly every other document of a build started a
// segment, and merging them was a third of the build.
func (w *txWriter) applyFTS(ctx context.Context) error {
	slices.SortFunc(w.ops, func(a, b ftsOp) int {
		switch {
		case a.del != b.del && a.del:
			return -1
		case a.del != b.del:
			return 1
		case a.fts != b.fts:
			return strings.Compare(a.fts, b.fts)
		}
		return cmpInt(a.id, b.id)
	})
	for _, op := range w.ops {
		q := `INSERT INTO ` + op.fts + `(rowid, text) VALUES (?, ?)`
		if op.del {
			q = `INSERT INTO ` + op.fts + `(` + op.fts + `, rowid, text) VALUES ('delete', ?, ?)`
		}
		st, err := w.stmt(ctx, q)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, op.id, op.text); err != nil {
			return err
		}
	}
	w.ops = nil
	return nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
