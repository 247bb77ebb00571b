// Package searchindex is the session-query service's full-text engine: a
// derived, disposable SQLite FTS5 index (modernc.org/sqlite) over the
// persisted JSONL logs and this process's live sessions. It implements
// sessionquery.SearchEngine and sessionquery.Catalog (every session's
// header, title, event count, last event time and log size, kept in the
// same transactions as its search rows, so that listings read no log);
// compositions install it with Mount, the only way it is put in front of a
// service, and the CLI uses Rebuild, Verify, Status and EventCounts. Everything else
// reaches it through the service.
//
// # Invariants
//
// The query is data: it is trimmed, whitespace-collapsed and matched as one
// quoted FTS5 phrase, so operators, stars, parentheses and quotes are inert.
// Tokens are unicode61 with remove_diacritics 2 ("CAFE" finds "café", "AI"
// does not find "BRAID", "req-4f3a-91" is the phrase req 4f3a 91), over the
// text's indexed form (host/searchtext), which extends the design: every
// Han, Hiragana, Katakana and Hangul character is a token of its own, so
// "数据库" finds "请检查数据库连接"; camelCase and PascalCase identifiers are
// also their parts, so "SessionHeader", "session header" and "header" find
// "parseSessionHeader", and "AI" finds "OpenAI" (a part) but still not
// "BRAID"; an identifier cut into parts is also indexed whole, so
// "parsesessionheader" finds it too. A query holding a camel-case
// identifier is two quoted phrases, its parts OR its whole
// (searchtext.Whole), so "OpenAI" also finds "openai", and a document with
// the identifier exactly matches both and ranks first; the live overlay
// rescales such a query phrase by phrase, as FTS5's bm25 sums them. Text
// without CJK or camel case is its own form and matches exactly as the
// design says. The form is never stored: content rows hold the original
// text, the FTS5 rows its form. A snippet needs only where the first match
// starts, which searchtext finds on the form exactly where FTS5's
// highlight() would (its tokenizer equals unicode61's) and carries back to
// the original's code points, so no search runs highlight(), whose cost
// grows with matches × length and which never checks for an interrupt.
// Stored text has NUL, U+FDD0 and U+FDD1 replaced by U+FFFD, so the
// highlight markers can never be forged. The index holds at most 256 KiB
// of an event's text (cut after whitespace; the rest stays readable
// through the service's reads). Search never repairs a log: persistence is only listed,
// stat-ed and inspected, and a live session is never inspected at all.
//
// # Files, processes and safety
//
// The database lives at Config.Path (a missing directory is created 0700,
// a missing file 0600; existing modes are kept). A file whose application id
// is not ours (0x44534851), or a file of ours holding tables we do not
// recognize, is refused without being touched; a file of ours at another
// schema version or text form is reset and rebuilt from the logs (with a
// one-line Options.Notice); a file of ours that is
// shorter than its header says, or (up to 32 MiB, where it is cheap) fails
// PRAGMA quick_check, is discarded and rebuilt (with a notice naming the
// damage). Several dsh processes
// may share one index: WAL, a busy timeout and BEGIN IMMEDIATE writes keep
// it consistent, each persisted session row carries the revision it was
// indexed at (a write only lands if the row still has the revision it was
// based on), and the store's change journal position is shared, advanced
// with compare-and-set. Ids the journal reports while some process has them
// live are parked in pending_sessions for whichever process sees them
// detached. Live overlays are per connection (TEMP tables on the one pinned
// connection, made by its first search or write: a process that only
// lists never makes them), so each process sees its own live sessions. A
// file deleted, replaced or truncated underneath a process is noticed
// before the next operation and reopened (and if need be rebuilt; a
// deleted file with a notice); SQLite corruption errors discard a file of
// ours, with a notice, so the next operation rebuilds it. Pages are read, never memory-mapped
// (see cacheSmall): a file truncated by hand while an operation reads it
// is a read error of that operation, never a SIGBUS that ends the process.
//
// # Reconciliation
//
// Every search and listing first brings the index up to date. With a
// persistence that implements ChangeFeed (sessionquery.StorePersistence), it reads
// the change journal from the stored cursor and looks only at the ids it
// names, the pending ids, the sessions that stopped being live here and
// what the drift checks below report: a search over an unchanged corpus
// costs a few syscalls and indexed reads, not a stat of every log. Only the
// first time, after a journal reset, for another sessions root or after a
// reboot does it list everything and compare revisions, reading changed
// logs on two goroutines ahead of the SQLite writer and committing in
// bounded batches. An index this process found empty (a first build, or
// after a reset) with a bulk load to index is instead filled as Rebuild
// fills its new file, beside it, and copied in (fillBeside).
//
// A log the journal names that the index already holds is usually one a
// dsh writer appended to. Then only the appended bytes are read, from
// where the index's last read of it ended (the store's extent: same file,
// same bytes just before that point), and only the new documents are
// inserted, with the catalog row, in one transaction. An appended
// document older than the session's latest (a clock that went back)
// sorts before some indexed ones: those alone are taken out and inserted
// again with it, renumbered from their stored text in the same
// transaction, so the rowids are the ones a whole index gives (see
// docBits). Whatever that cannot prove is read whole and the session
// re-indexed as before: no journal record (drift, a pending id), a
// different or shorter file, a changed tail, an appended line that refers
// to deltas before the extent, a read that had added a crash repair's
// closers or would now add them, an appended event that replaces part of
// the surface (it changes earlier documents' surfaces) or fails
// validation, a log already invalid or unreadable, or ordinals run out.
//
// # Trust and drift
//
// The journal cursor is stored in the index and advanced in the same
// transaction as the rows it accounts for, with the machine's boot id: a
// fresh process trusts the index up to the cursor and applies only the
// later records. The write protocol that makes this safe is, per log:
//
//  1. the writer takes the log's lock (its owner record names the process)
//     and journals an announcement (Create after writing the new log, Open
//     before returning the writer, a repair before changing the log);
//  2. it appends (the log write), then Flush fsyncs and journals a record;
//  3. a reader consumes records and commits the rows and the cursor in one
//     transaction.
//
// Crash points: before the announcement of a Create, the new session
// directory changed its workspace directory's stamp (below). Between an
// append and its record, the announcement made the reader put the log in
// open_writers; once the lock's owner is gone (WriterRunning), the reader
// looks at the log once more. Before the reader's commit, nothing was
// consumed and the next reader redoes it. The journal is not fsynced: a
// machine crash can lose records, so a new boot id lists everything once.
//
// Changes behind dsh's back are seen as follows: a log copied in or a
// session directory deleted changes its workspace directory's modification
// time (or the root's, for a new workspace), which every reconciliation
// compares with the stored stamps at the cost of one stat per workspace;
// a changed directory's ids (the names of its session directories, one
// directory read and no stat of any log) are compared with the catalog's
// (stamps within two seconds of now are not trusted, so a change in the
// same tick is not missed). A log edited in place (same directory, no
// record), or deleted from a directory that stays, is seen by a
// bounded re-check: each reconciliation re-stats verifyBatch catalogued
// logs round robin, so it is found within sessions/verifyBatch searches,
// and at once by Verify (dsh index verify), which lists everything,
// reports the drift and repairs it. A log whose events cannot be read is
// catalogued as unreadable (with the reason) and has nothing to search; it
// never fails the other sessions.
// The writer queues every FTS5 operation behind the transaction's ordinary
// rows, because any statement that opens a statement journal makes FTS5
// flush its pending segment. Any other persistence
// gets the protocol of session-query.md §3.7 (list, inspect what changed,
// list again, retry once). Live sessions are re-overlaid when
// Live.Revision changes (it changes on every append and differs between
// instances), which stands in for upstream's SHA-256 over the whole log.
//
// # Ranking
//
// We rank by FTS5's bm25 instead of upstream's highlight-span count:
// counting spans needs highlight() on every match, which for a common word
// means re-tokenizing most of the corpus per search. bm25 comes from the
// index alone. A query whose phrases hold a rare term (one in fewer than
// 2,000 documents) is ranked by FTS5: the session query streams (rowid,
// rank) pairs in rowid order, where a session's matches are contiguous,
// and keeps each session's strongest as they pass: no sorter holds every
// match and no document or session row is read except for the winners
// that can still make the pages asked for so far (see persistedRanking).
// FTS5 scores every match that way, which costs a pass over the postings
// to count them for bm25's idf and a docsize read per match: cheap for a
// rare term, not for a common one. A query of common terms is ranked from
// the term summaries instead (terms.go, ranking.go), with the same scores
// computed the same way, looking at a few dozen sessions' documents
// instead of every match. Scores of the live overlay (a separate, per-connection FTS5
// table with its own statistics) are mapped onto the persisted table's scale
// by recovering each document's phrase frequency and recomputing bm25 with
// the persisted statistics (when the summaries rank the query, live
// documents are scored from their text as persisted ones are), so live and
// persisted documents compare as if they were one corpus, and identical
// documents tie exactly. Ties keep the
// documented order: shorter document (code points), later time, then
// session id (byte order) and later seq. Document rowids are
// sessionKey<<39 | length<<20 | (maxOrdinal - ordinal), the ordinal
// counting a session's documents in (time, seq) order (see docBits), so
// the smallest rowid among equal scores is the documented winner and
// appending events to a session changes no existing rowid.
//
// # Term summaries and phrase statistics
//
// For every tracked term (one in at least 2,000 persisted documents) the
// index keeps, per session, how many of its documents hold the term and
// their frontier under bm25 (terms.go), and for phrases of tracked terms
// that searches needed it, which documents hold the phrase, with its
// frequency in each and each one's length (phrases.go): a session holding
// a phrase's terms apart only is no candidate for it, and an identifier's
// candidates are made exact from the records and their rare matches'
// scores, without FTS5 or reading their text. Both are written in the
// same transactions as the documents they describe, by every write: a
// whole session indexed, appended to, renumbered (renumberLater: its
// points are relabeled), re-indexed or deleted. A term is promoted (its
// summaries built from the FTS5 vocabulary, in a write transaction) when a
// process filling an empty index counts it past the threshold, or by the
// first search that needs it; a phrase is recorded by the first search
// that needs it. So the summaries are exact whenever the documents are,
// and the ranking they give (ranking.go) is FTS5's, score for score. The
// tests compare the stored summaries, counts and sessions with ones
// rebuilt from FTS5 after every kind of write, and every ranking with
// FTS5's.
//
// # Generations and cursors
//
// Cursors are base64url JSON bound to the SHA-256 of the normalized
// request's canonical form and to an instance id that changes on every
// (re)open. A sessions cursor goes stale on any corpus change seen by any
// process (the shared global generation) or any live or binding change
// here; an events cursor only when its target session changes.
package searchindex
