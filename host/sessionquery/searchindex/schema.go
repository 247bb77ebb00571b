package searchindex

import "github.com/seed-e9b4dba4/dsh/host/searchtext"

// Schema identity. The application id is "DSHQ"; user_version is this
// package's own schema version (we are not file-compatible with upstream),
// bumped whenever the schema below or what it stores changes (2: text is
// capped per event, see maxDocBytes; 3: rowids stable under append, see
// docBits, and each session's log extent; 4: the term summaries, see
// terms.go; 5: the phrase statistics, see phrases.go; 6: term summary
// points store their rowid's two parts; 7: the documents holding each
// recorded phrase; 8: the catalog's totals). A file of ours at any other
// version is reset in place and rebuilt from the logs.
const (
	applicationID = 0x44534851
	schemaVersion = 8
)

// textForm names how documents are turned into indexed text (tokenizer
// and any rewriting before it). An index built with another form is
// re-indexed from the logs like one of another schema version, so a new
// form needs no layout change. 2: CJK characters and identifier parts are
// tokens of their own (host/searchtext).
const textForm = 2

// Document rowids pack the owning session's key, the document's length in
// code points and its ordinal, its position among the session's documents
// in (time, seq) order:
//
//	rowid = sessionKey<<docBits | length<<ordBits | (maxOrdinal - ordinal)
//
// Within a session, smaller rowids are shorter documents and, at equal
// length, later (time, seq) ones: exactly the ranking tie-breaks, so
// "smallest rowid among equal scores" is the documented winner, and
// grouping by session needs only the rowid FTS5 already has in hand. An
// appended event has a later seq and usually a time no earlier than every
// earlier one, so its documents take the next ordinals and no existing
// rowid changes: appending inserts only the new documents. An appended
// document older than the session's latest one (a writer's clock went
// back, or events were stamped ahead of it) sorts before the documents
// later than it, which alone are numbered again with it (renumberLater).
// A session that runs out of ordinals is indexed again whole (ordinals
// start over).
//
// The split of the 63 bits: 19 for the length (a document holds at most
// maxDocBytes = 256 KiB of text, so at most 262,144 code points < 2^19),
// 20 for the ordinal (1,048,576 searchable events per session, the
// per-session limit) and 24 for the session key (a new session takes
// the largest key plus one, so 16,777,216 sessions created since the index
// was built; past that a write fails, the index is discarded and a rebuild
// numbers the sessions from 1 again).
const (
	lenBits    = 19
	ordBits    = 20
	keyBits    = 63 - docBits
	docBits    = lenBits + ordBits
	docMask    = 1<<docBits - 1
	maxLength  = 1<<lenBits - 1
	maxOrdinal = 1<<ordBits - 1
	maxKey     = 1<<keyBits - 1
)

// tokenizer is the FTS5 tokenizer of the index: the one searchtext.Tokens
// equals, which snippets, ranking and the term summaries rely on.
const tokenizer = searchtext.Tokenizer

// recognizedTables are every user table a database of ours may contain,
// FTS5 shadow tables included. Anything else makes the file foreign.
var recognizedTables = []string{
	"search_state",
	"persisted_sessions",
	"catalog_totals",
	"persisted_docs",
	"pending_sessions",
	"open_writers",
	"workspace_dirs",
	"tracked_terms",
	"term_sessions",
	"phrase_stats",
	"phrase_sessions",
	"persisted_fts",
	"persisted_fts_data",
	"persisted_fts_idx",
	"persisted_fts_docsize",
	"persisted_fts_config",
}

// mainSchema is the shared, persistent part. feed_source and feed_cursor
// remember how far the change journal of which sessions root has been
// applied; pending_sessions holds ids the journal reported while some
// process had them live, so whoever sees them detached indexes them.
const mainSchema = `
CREATE TABLE IF NOT EXISTS search_state(
	singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
	global_generation INTEGER NOT NULL,
	feed_source TEXT,
	feed_cursor INTEGER,
	feed_boot TEXT,
	text_form INTEGER NOT NULL,
	terms_version INTEGER NOT NULL DEFAULT 0,
	phrases_version INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE IF NOT EXISTS persisted_sessions(
	session_key INTEGER PRIMARY KEY,
	session_id TEXT NOT NULL UNIQUE,
	version INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	cwd TEXT,
	parent_session TEXT,
	seed_length INTEGER,
	delegation_depth INTEGER,
	agent_preset TEXT,
	revision TEXT NOT NULL,
	generation INTEGER NOT NULL,
	event_count INTEGER NOT NULL,
	doc_count INTEGER NOT NULL,
	` + catalogColumns + `,
	log_path TEXT NOT NULL,
	workspace_dir TEXT NOT NULL,
	doc_time_max INTEGER,
	log_extent BLOB
) STRICT;
CREATE INDEX IF NOT EXISTS persisted_sessions_cwd ON persisted_sessions(cwd, created_at DESC, session_id);
-- (workspace_dir, event_count) serves the drift check's per-directory
-- lookups.
CREATE INDEX IF NOT EXISTS persisted_sessions_dir ON persisted_sessions(workspace_dir, event_count);
-- The catalog's totals, kept by triggers in the transaction of every
-- change to persisted_sessions, so that Status and the count of every
-- workspace's sessions read one row instead of one per session.
CREATE TABLE IF NOT EXISTS catalog_totals(
	singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
	sessions INTEGER NOT NULL,
	events INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO catalog_totals(singleton, sessions, events) VALUES (1, 0, 0);
CREATE TRIGGER IF NOT EXISTS catalog_totals_insert AFTER INSERT ON persisted_sessions BEGIN
	UPDATE catalog_totals SET sessions = sessions + 1, events = events + NEW.event_count;
END;
CREATE TRIGGER IF NOT EXISTS catalog_totals_delete AFTER DELETE ON persisted_sessions BEGIN
	UPDATE catalog_totals SET sessions = sessions - 1, events = events - OLD.event_count;
END;
CREATE TRIGGER IF NOT EXISTS catalog_totals_update AFTER UPDATE OF event_count ON persisted_sessions BEGIN
	UPDATE catalog_totals SET events = events - OLD.event_count + NEW.event_count;
END;
CREATE TABLE IF NOT EXISTS persisted_docs(
	doc_id INTEGER PRIMARY KEY,
	seq INTEGER NOT NULL,
	type TEXT NOT NULL,
	time INTEGER NOT NULL,
	surface TEXT NOT NULL,
	codepoint_length INTEGER NOT NULL,
	text TEXT NOT NULL
) STRICT;
CREATE VIRTUAL TABLE IF NOT EXISTS persisted_fts USING fts5(
	text, content='persisted_docs', content_rowid='doc_id', tokenize='` + tokenizer + `'
);
CREATE TABLE IF NOT EXISTS pending_sessions(
	session_id TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS open_writers(
	session_id TEXT PRIMARY KEY,
	log_path TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS workspace_dirs(
	name TEXT PRIMARY KEY,
	mtime INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
-- The term summaries (terms.go): the tracked terms, and per tracked term
-- and block of session keys the encoded entries of those sessions, keyed
-- by term_id << 32 | block (a rowid table keeps a block of up to about
-- 4 KiB in its leaf, where a WITHOUT ROWID one spills a fraction of a
-- page to overflow).
CREATE TABLE IF NOT EXISTS tracked_terms(
	term_id INTEGER PRIMARY KEY,
	term TEXT NOT NULL UNIQUE
) STRICT;
CREATE TABLE IF NOT EXISTS term_sessions(
	id INTEGER PRIMARY KEY,
	entries BLOB NOT NULL
) STRICT;
-- The phrase statistics (phrases.go): phrases of tracked terms, how
-- many persisted documents hold each, and which of each session's.
CREATE TABLE IF NOT EXISTS phrase_stats(
	id INTEGER PRIMARY KEY,
	phrase TEXT NOT NULL UNIQUE,
	df INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS phrase_sessions(
	phrase_id INTEGER NOT NULL,
	session_key INTEGER NOT NULL,
	docs BLOB NOT NULL,
	PRIMARY KEY (phrase_id, session_key)
) STRICT, WITHOUT ROWID;
`

// catalogColumns are what every listing shows of a session, kept beside
// its search rows (see Summaries): the whole header as JSON, the folded title as JSON (NULL when
// untitled), a malformed title's seq and message, the time of the last
// event, the log's size, why the log could not be read and why it fails
// the replay validation ("" when it could, or passes).
const catalogColumns = `header TEXT NOT NULL,
	title TEXT,
	title_error_seq INTEGER,
	title_error TEXT,
	last_event_at INTEGER NOT NULL,
	log_bytes INTEGER NOT NULL,
	unreadable TEXT NOT NULL,
	invalid TEXT NOT NULL`

// tempSchema is the per-connection temp schema; SQLite drops it when the
// connection closes, which is why the index pins exactly one connection.
// It is two parts, each made by the first operation that needs it:
// liveSchema, the live overlay (database.overlay), and vocabSchema.
const tempSchema = liveSchema + vocabSchema

// liveSchema is the live overlay: this process's live sessions, made by
// the first search or the first write of a live row.
const liveSchema = `
CREATE TEMP TABLE IF NOT EXISTS live_sessions(
	session_key INTEGER PRIMARY KEY,
	session_id TEXT NOT NULL UNIQUE,
	version INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	cwd TEXT,
	parent_session TEXT,
	seed_length INTEGER,
	delegation_depth INTEGER,
	agent_preset TEXT,
	fingerprint TEXT NOT NULL,
	persisted INTEGER NOT NULL CHECK (persisted IN (0, 1)),
	generation INTEGER NOT NULL,
	event_count INTEGER NOT NULL,
	doc_count INTEGER NOT NULL,
	` + catalogColumns + `
) STRICT;
CREATE TEMP TABLE IF NOT EXISTS live_docs(
	doc_id INTEGER PRIMARY KEY,
	seq INTEGER NOT NULL,
	type TEXT NOT NULL,
	time INTEGER NOT NULL,
	surface TEXT NOT NULL,
	codepoint_length INTEGER NOT NULL,
	text TEXT NOT NULL
) STRICT;
CREATE VIRTUAL TABLE IF NOT EXISTS temp.live_fts USING fts5(
	text, content='live_docs', content_rowid='doc_id', tokenize='` + tokenizer + `'
);
`

// vocabSchema reads the persisted index's vocabulary: a term's document
// count, and its instances when it is promoted (terms.go). Searches and
// every write make it (database.vocab): a write may promote terms.
const vocabSchema = `
CREATE VIRTUAL TABLE IF NOT EXISTS temp.persisted_vocab_row USING fts5vocab(main, persisted_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.persisted_vocab_instance USING fts5vocab(main, persisted_fts, 'instance');
`
