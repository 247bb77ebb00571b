package searchindex

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

const (
	busyTimeoutMs = 10000
	sqliteMagic   = "SQLite format 3\x00"
)

// database is one open index with its single pinned connection: TEMP
// tables live on a connection, so the overlay would silently vanish if a
// pool handed out a second one.
type database struct {
	pool    *sql.DB
	conn    *sql.Conn
	path    string // "" for an in-memory index
	ident   fileIdent
	minSize int64                // the file never shrinks below what was last seen
	stmts   map[string]*sql.Stmt // searches' (see stmt)
	writes  map[string]*sql.Stmt // the writer's (see txWriter.stmt)
	// notice is the one-line message for the user about a file of ours
	// that is rebuilt from the logs: reset because another dsh version
	// built it, or discarded because it was damaged ("" otherwise).
	notice string
	// created says the file did not exist before this open.
	created bool
	// ordered says persisted_sessions_order was looked for (and made when
	// the catalog is big enough); see ensureOrderIndex.
	ordered bool
	// grown says the page cache was grown (growCache).
	grown bool
	// overlaid says this connection has the whole temp schema
	// (tempSchema), made by the first operation that reads or writes the
	// live overlay (overlay); vocabulary says it has vocabSchema (vocab).
	overlaid, vocabulary bool
}

// fileIdent identifies the file a path named when it was opened, so a file
// deleted or replaced underneath a running process is noticed.
type fileIdent struct{ dev, ino uint64 }

// damagedError reports a file that is ours (its header carries our
// application id) but that SQLite cannot read: it is safe to discard and
// rebuild from the logs.
type damagedError struct{ err error }

func (e *damagedError) Error() string { return "the index file is damaged: " + e.err.Error() }
func (e *damagedError) Unwrap() error { return e.err }

// oneLine collapses a message's whitespace, newlines included, for a
// one-line notice.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// openDatabase opens (creating if needed) the index at cfg.Path, refusing
// any file that is not ours without changing it, resetting a file of ours
// at another schema version, and discarding a file of ours that is damaged.
func openDatabase(ctx context.Context, cfg Config) (*database, error) {
	d, err := openOnce(ctx, cfg)
	var dmg *damagedError
	if errors.As(err, &dmg) && cfg.Path != MemoryPath {
		if rerr := removeDatabase(cfg.Path); rerr != nil {
			return nil, openFailed(fmt.Errorf("%w; removing it failed: %w", err, rerr))
		}
		d, err = openOnce(ctx, cfg)
		if err == nil {
			d.notice = fmt.Sprintf("the session-search index %s was damaged (%s); rebuilding it from the session logs", cfg.Path, oneLine(dmg.err.Error()))
		}
	}
	if err != nil {
		return nil, openFailed(err)
	}
	return d, nil
}

func openOnce(ctx context.Context, cfg Config) (_ *database, err error) {
	d := &database{}
	dsn := ":memory:"
	ours := false
	if cfg.Path != MemoryPath {
		d.path = cfg.Path
		if d.created, err = ensureFile(cfg.Path); err != nil {
			return nil, err
		}
		var short bool
		if ours, short, err = checkHeader(cfg.Path); err != nil {
			return nil, err
		}
		if ours && short {
			return nil, &damagedError{err: errors.New("the file is shorter than its header says (truncated)")}
		}
		if d.ident, d.minSize, err = identify(cfg.Path); err != nil {
			return nil, err
		}
		dsn = "file:" + uriEscape(cfg.Path)
	}
	dsn += fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeoutMs)
	d.pool, err = sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	d.pool.SetMaxOpenConns(1)
	d.pool.SetMaxIdleConns(1)
	d.pool.SetConnMaxLifetime(0)
	d.pool.SetConnMaxIdleTime(0)
	defer func() {
		if err != nil {
			d.close()
			if ours && isCorruption(err) {
				err = &damagedError{err: err}
			}
		}
	}()
	if d.conn, err = d.pool.Conn(ctx); err != nil {
		return nil, err
	}
	stale, complete, err := d.checkOwnership(ctx, cfg.Path)
	if err != nil {
		return nil, err
	}
	if stale {
		d.notice = "the session-search index was built by another dsh version; rebuilding it from the session logs (once)"
		if err := d.reset(ctx); err != nil {
			return nil, err
		}
	}
	if err := d.configure(ctx, cfg); err != nil {
		return nil, err
	}
	// An index already at this schema is opened without writing: a
	// command that only reads (status, list) then costs no commit and no
	// checkpoint when it closes.
	if stale || !complete {
		if err := d.createSchema(ctx); err != nil {
			return nil, err
		}
	}
	if err := d.quickCheck(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// overlay makes this connection's live overlay and vocabulary tables
// (tempSchema) unless it has them. Searches and the writes of live rows
// need the overlay; a command that only reads the catalog (status, a
// listing), or whose catch-up writes only persisted rows, never makes it,
// which spares a fresh process about a millisecond and a half. It runs
// outside any transaction, so that a rollback cannot take back tables it
// counts as made.
func (d *database) overlay(ctx context.Context) error {
	if d.overlaid {
		return nil
	}
	if _, err := d.conn.ExecContext(ctx, tempSchema); err != nil {
		return openFailed(fmt.Errorf("create the live overlay: %w", err))
	}
	d.overlaid, d.vocabulary = true, true
	return nil
}

// vocab makes the vocabulary tables (vocabSchema) unless this connection
// has them; like overlay, outside any transaction.
func (d *database) vocab(ctx context.Context) error {
	if d.vocabulary {
		return nil
	}
	if _, err := d.conn.ExecContext(ctx, vocabSchema); err != nil {
		return openFailed(fmt.Errorf("create the vocabulary tables: %w", err))
	}
	d.vocabulary = true
	return nil
}

// ensureFile creates missing parent directories (0700) and a missing file
// (0600, exclusively) and reports whether it created the file; existing
// ones keep their modes. SQLite creates its sidecar files with the
// database file's mode.
func ensureFile(path string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

// checkHeader reads the raw file header before SQLite touches the file: a
// non-SQLite file or a foreign application id is refused right here, and
// "ours" (our application id) decides whether a damaged file may be
// discarded. short reports a file smaller than the database size its
// header records: the cheap, constant-time sign of a truncation.
func checkHeader(path string) (ours, short bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	var hdr [100]byte
	n, err := io.ReadFull(f, hdr[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, false, err
	}
	if n == 0 {
		return false, false, nil
	}
	if n < len(sqliteMagic) || !bytes.Equal(hdr[:len(sqliteMagic)], []byte(sqliteMagic)) || n < len(hdr) {
		return false, false, fmt.Errorf("session-search database at %q is not an empty or recognized derived index (it is not a SQLite database); move it aside or delete it", path)
	}
	id := binary.BigEndian.Uint32(hdr[68:72])
	if id != 0 && id != applicationID {
		return false, false, fmt.Errorf("session-search database at %q belongs to another application", path)
	}
	pageSize := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(hdr[28:32]))
	// The recorded size is valid only while the change counter matches
	// the version-valid-for number (SQLite file format, "in-header database
	// size").
	valid := pages > 0 && binary.BigEndian.Uint32(hdr[24:28]) == binary.BigEndian.Uint32(hdr[92:96])
	if fi, err := f.Stat(); err == nil && valid && fi.Size() < pages*pageSize {
		short = true
	}
	return id == applicationID, short, nil
}

// filePageSize reads the page size from a database file's header; 0 when
// there is no readable header (no file yet, or an empty one).
func filePageSize(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var hdr [100]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || !bytes.Equal(hdr[:len(sqliteMagic)], []byte(sqliteMagic)) {
		return 0
	}
	size := int(binary.BigEndian.Uint16(hdr[16:18]))
	if size == 1 {
		size = 65536
	}
	return size
}

// checkOwnership applies the refusal rules on the open file and reports
// whether a file of ours carries another schema version (stale) or already
// holds every table of this one (complete).
func (d *database) checkOwnership(ctx context.Context, path string) (stale, complete bool, err error) {
	// One read transaction, so a process creating the schema right now is
	// seen either not at all or completely.
	if _, err := d.conn.ExecContext(ctx, `BEGIN`); err != nil {
		return false, false, err
	}
	defer func() {
		if _, rerr := d.conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`); err == nil && rerr != nil {
			err = rerr
		}
	}()
	var appID, version int64
	if err := d.conn.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return false, false, err
	}
	if err := d.conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return false, false, err
	}
	tables, err := d.userTables(ctx)
	if err != nil {
		return false, false, err
	}
	if path == "" {
		path = MemoryPath
	}
	switch {
	case appID != 0 && appID != applicationID:
		return false, false, fmt.Errorf("session-search database at %q belongs to another application", path)
	case appID == 0 && len(tables) > 0:
		return false, false, fmt.Errorf("session-search database at %q is not an empty or recognized derived index", path)
	case appID == 0:
		return false, false, nil
	}
	var unknown []string
	for _, t := range tables {
		if !slices.Contains(recognizedTables, t) {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) > 0 {
		return false, false, fmt.Errorf("session-search database at %q has unrecognized user tables: %s", path, strings.Join(unknown, ", "))
	}
	if version != schemaVersion {
		return true, false, nil
	}
	var form sql.NullInt64
	err = d.conn.QueryRowContext(ctx, `SELECT text_form FROM search_state WHERE singleton = 1`).Scan(&form)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if form.Valid && form.Int64 != textForm {
		return true, false, nil
	}
	return false, len(tables) == len(recognizedTables), nil
}

// userTables lists tables whose names do not GLOB sqlite_* (where _ is a
// literal underscore, so "sqliteX" counts as a user table).
func (d *database) userTables(ctx context.Context) ([]string, error) {
	rows, err := d.conn.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT GLOB 'sqlite_*' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// reset drops every table of an older schema; the logs rebuild it.
func (d *database) reset(ctx context.Context) error {
	return d.immediate(ctx, func() error {
		for range 2 { // virtual tables first: dropping one drops its shadows
			rows, err := d.conn.QueryContext(ctx, `SELECT name, sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_master WHERE type = 'table' AND name NOT GLOB 'sqlite_*'`)
			if err != nil {
				return err
			}
			var virtual, plain []string
			for rows.Next() {
				var name string
				var isVirtual bool
				if err := rows.Scan(&name, &isVirtual); err != nil {
					rows.Close()
					return err
				}
				if isVirtual {
					virtual = append(virtual, name)
				} else {
					plain = append(plain, name)
				}
			}
			rows.Close()
			drop := virtual
			if len(drop) == 0 {
				drop = plain
			}
			for _, name := range drop {
				if _, err := d.conn.ExecContext(ctx, `DROP TABLE IF EXISTS "`+strings.ReplaceAll(name, `"`, `""`)+`"`); err != nil {
					return err
				}
			}
		}
		_, err := d.conn.ExecContext(ctx, `PRAGMA user_version = 0`)
		return err
	})
}

// newPageSize is the page size of a new index file, SQLite's largest.
// The largest part of the file is FTS5's leaves, ~4 KiB blobs, sixteen to
// a page, and the copy of a rebuild into the live index (swapIn) writes
// every page twice, to the write-ahead log and then to the file, with a
// system call or two each. On the tiny preset (a 600 MB index), 64 KiB
// pages made that copy 1.1-1.2 s instead of 2.1-2.4 s with 8 KiB ones,
// and the final merge (finishBuild) 1.75 s instead of 2.1-2.2 s: whole
// rebuilds 19.6-20.0 s instead of 21.5-21.9 s (alternating), and 18.9 s
// instead of 22.3 s on the large preset. Searches were as fast; the
// catch-up after appended events writes whole pages, 19.5 ms instead of
// 16.9 on the large preset, and a listing reads them, ~0.7 ms more of
// ~8 ms. A file keeps the page size it was made with: an index made with
// 8 KiB pages is rebuilt with them (the copy into a WAL file cannot change
// it); removing the index file makes a new one. An empty index is a page
// per table and index, about 1.4 MiB.
const newPageSize = 65536

// walBytes bounds the write-ahead log between checkpoints in bytes
// rather than SQLite's 1,000 pages: what the index ran with when its pages
// were 8 KiB, so that no single checkpoint after a run of small writes
// copies 64 MiB.
const walBytes = 1000 * 8192

func (d *database) configure(ctx context.Context, cfg Config) error {
	journalMode := cfg.JournalMode
	if fi, err := os.Stat(d.path); d.path != "" && err == nil && fi.Size() == 0 {
		pageSize := cfg.pageSize
		if pageSize == 0 {
			pageSize = newPageSize
		}
		if _, err := d.conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d`, pageSize)); err != nil {
			return err
		}
		if cfg.private {
			if _, err := d.conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
				return err
			}
		}
	}
	mode, err := d.setJournalMode(ctx, journalMode)
	if err != nil {
		return fmt.Errorf("set journal mode %s: %w", journalMode, err)
	}
	if d.path != "" && mode != journalMode {
		return fmt.Errorf("set journal mode %s: SQLite kept %s", journalMode, mode)
	}
	if mode == "wal" {
		if err := d.boundWAL(ctx); err != nil {
			return err
		}
	}
	// The index is derived: after a crash SQLite still recovers a
	// consistent state, and anything lost is re-read from the logs.
	if _, err = d.conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL; PRAGMA cache_size = `+cacheSmall+`; PRAGMA cache_spill = `+cacheSpill); err != nil {
		return err
	}
	if cfg.private || cfg.resident {
		return d.growCache(ctx)
	}
	return nil
}

// The page cache keeps few clean pages and many dirty ones. Most
// processes are brief (a search, a listing) and read each page they need
// about once: SQLite fills a page cache that still has room by allocating
// a new buffer, whose first touch is a page fault, while a full cache
// recycles its least recently used clean page. With 32 pages, a cold
// identifier search of the large preset takes ~15% less time than with
// 32 MiB of cache read through a memory map (which costs a fault per page
// as well), and a long-lived process loses little: its repeated reads are
// copies from the kernel's page cache. A write transaction keeps the pages
// it changes until it commits, up to cacheSpill (beyond it, SQLite writes
// them to the WAL early, and may write one twice), while the pages it only
// reads, such as the matches of a phrase being recorded, recycle the same
// 32 buffers. Writing in bulk (a rebuild's private file, a first index of
// a long history) rereads the pages it changed a moment ago: a connection
// that commits a full batch keeps cacheSpill of pages of either kind from
// then on (growCache; with 32 clean pages, building the large preset's
// index took ~30% longer). So does a resident process (Options.Resident:
// an editor's agent, the terminal UI), which ranks many searches over its
// life: with 32 pages, its fresh rankings of a common word or a phrase
// reread pages it read a moment ago, ~10-20% slower on the small preset.
// The same holds for 64 KiB pages (newPageSize), 4 of them: with 32, the
// large preset's listings and searches took ~5% longer. Nothing is
// memory-mapped, so a file truncated underneath a reader is a read error,
// not a SIGBUS.
const (
	cacheSmall = "-256"   // KiB: 32 pages of 8 KiB, 4 of 64 KiB
	cacheSpill = "-32768" // KiB
)

// boundWAL sets the automatic checkpoint to walBytes of pages.
func (d *database) boundWAL(ctx context.Context) error {
	var pageSize int
	if err := d.conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return err
	}
	_, err := d.conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, max(1, walBytes/pageSize)))
	return err
}

// growCache grows the page cache to cacheSpill, once per connection.
func (d *database) growCache(ctx context.Context) error {
	if d.grown {
		return nil
	}
	if _, err := d.conn.ExecContext(ctx, `PRAGMA cache_size = `+cacheSpill); err != nil {
		return err
	}
	d.grown = true
	return nil
}

// setJournalMode switches the journal mode, waiting up to the busy timeout
// while another connection holds a lock. Switching a new file into WAL
// needs an exclusive lock, which SQLite refuses at once with SQLITE_BUSY,
// without calling the busy handler, while another process is opening the
// same new file (two dsh processes started together on a fresh home).
func (d *database) setJournalMode(ctx context.Context, journalMode string) (string, error) {
	deadline := time.Now().Add(busyTimeoutMs * time.Millisecond)
	delay := time.Millisecond
	for {
		var mode string
		err := d.conn.QueryRowContext(ctx, `PRAGMA journal_mode = `+journalMode).Scan(&mode)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return mode, err
		}
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

func (d *database) createSchema(ctx context.Context) error {
	return d.immediate(ctx, func() error {
		stmts := []string{
			fmt.Sprintf(`PRAGMA application_id = %d`, applicationID),
			fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion),
			mainSchema,
			fmt.Sprintf(`INSERT OR IGNORE INTO search_state(singleton, global_generation, text_form) VALUES (1, 0, %d)`, textForm),
		}
		for _, s := range stmts {
			if _, err := d.conn.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		return nil
	})
}

// quickCheckMax bounds the files verified in full on open: PRAGMA
// quick_check reads every page (about 2 s for a 500 MB index), which a
// command-line invocation cannot pay each time. Larger files rely on the
// header size check and on SQLite reporting corruption when a statement
// meets it, which discards the file just the same.
const quickCheckMax = 32 << 20

// quickCheck verifies the B-tree structure of the file so that a damaged
// index of ours is rebuilt instead of serving errors or partial results.
func (d *database) quickCheck(ctx context.Context) error {
	if d.path == "" || d.minSize > quickCheckMax {
		return nil
	}
	rows, err := d.conn.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return &damagedError{err: fmt.Errorf("integrity check: %s", strings.Join(problems, "; "))}
	}
	return nil
}

// immediate runs fn in a BEGIN IMMEDIATE transaction: the write lock is
// taken up front (waiting up to the busy timeout for another process), so
// a transaction never fails half-way for lack of it.
func (d *database) immediate(ctx context.Context, fn func() error) (err error) {
	if _, err := d.conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = d.conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		}
	}()
	if err := fn(); err != nil {
		return err
	}
	_, err = d.conn.ExecContext(ctx, `COMMIT`)
	return err
}

// execAll runs statements in order, stopping at the first that fails.
func (d *database) execAll(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		if _, err := d.conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (d *database) close() error {
	d.closeStatements()
	var errs []error
	if d.conn != nil {
		errs = append(errs, d.conn.Close())
		d.conn = nil
	}
	if d.pool != nil {
		errs = append(errs, d.pool.Close())
		d.pool = nil
	}
	return errors.Join(errs...)
}

// moved reports whether the path no longer names the file that was
// opened (deleted, replaced) or the file shrank (truncated): the index
// never shrinks its own file, so either way it must be reopened.
func (d *database) moved() bool {
	if d.path == "" {
		return false
	}
	ident, size, err := identify(d.path)
	if err != nil || ident != d.ident {
		return true
	}
	if size < d.minSize {
		return true
	}
	d.minSize = size
	return false
}

func identify(path string) (fileIdent, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileIdent{}, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileIdent{}, fi.Size(), nil
	}
	return fileIdent{dev: uint64(st.Dev), ino: st.Ino}, fi.Size(), nil
}

// removeDatabase deletes the index file and its sidecars.
func removeDatabase(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isCorruption reports SQLite's "this is not a (readable) database" codes.
func isCorruption(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		var dmg *damagedError
		return errors.As(err, &dmg)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// isBusy reports SQLite's "another connection holds the lock" codes.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// uriEscape makes an absolute path safe inside a SQLite file: URI.
func uriEscape(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}
