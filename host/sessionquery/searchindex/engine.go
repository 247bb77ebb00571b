package searchindex

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Index is the SQLite FTS5 search engine behind the session-query service.
// Every operation runs through one FIFO queue; the database handle, the
// live-overlay mirror and the generations below belong to whichever
// operation holds it.
type Index struct {
	cfg    Config
	svc    *sessionquery.Service
	log    *slog.Logger
	notice func(string)

	queue fifo

	openOnce sync.Once
	ready    chan struct{} // closed when the first open finished
	openErr  error         // memoized failure of the first open

	opens     atomic.Int64 // database opens, for tests of the open-once rule
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// Owned by the queue holder.
	db          *database
	instance    string
	live        map[string]liveRow // mirror of temp.live_sessions
	nextLiveKey int64
	nextLocal   int64
	dbGen       int64 // global_generation as last read
	memGen      int64 // bumped by every corpus write or binding change seen here
	epoch       int64 // persistence epoch: bumped on every binding change
	seenBinding bool
	bindingID   uint64
	listed      bool  // a full listing of the feed was committed since open
	listedNow   bool  // the running reconciliation lists fully
	verifyAfter int64 // the session key the bounded re-verification continues after
	forceFull   bool  // the running reconciliation lists everything (Verify)
	private     bool  // a rebuild's new file, which no other process knows (see buildBeside)
	ranked      *rankedSessions
	kept        *keptBlocks // a private file's, between its transactions
	// tracked is the tracked vocabulary as the last write read it; the
	// goroutines that read logs ahead of the writer cut their summaries
	// to it (summarize).
	tracked  atomic.Pointer[trackedTerms]
	phrases  *cachedPhrases // the recorded phrases as last read
	bulk     *bulkTerms     // set when the index was empty at open
	trackMin int64          // defaultTrackMin; tests lower it
	ftsOnly  bool           // tests: rank every query with FTS5 (the oracle of the summaries)
	ahead    readAhead      // defaultReadAhead; tests lower it
}

// liveRow is what the overlay holds for one live session.
type liveRow struct {
	key         int64
	fingerprint string
	persisted   bool
	generation  int64
}

// Options are the optional collaborators of an Index.
type Options struct {
	// Log receives warnings (nil: discard).
	Log *slog.Logger
	// Notice receives one-line messages meant for the user, such as the
	// rebuild of an index built by another dsh version (nil: Log).
	Notice func(msg string)
	// Resident says the process ranks many searches over its life (an
	// editor's agent, the terminal UI): its page cache keeps what it
	// reads, up to 32 MiB, where a brief command's recycles a few pages
	// (see cacheSmall).
	Resident bool
}

// New validates cfg and returns an index serving svc's live sessions and
// mounted persistence. It opens nothing: Open does, or the first search in
// "first-search" mode.
func New(cfg Config, svc *sessionquery.Service, opts Options) (*Index, error) {
	cfg = cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.resident = opts.Resident
	if svc == nil {
		return nil, invalidConfig("a session-query service is required")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	notice := opts.Notice
	if notice == nil {
		notice = func(msg string) { log.Warn(msg) }
	}
	return &Index{cfg: cfg, svc: svc, log: log, notice: notice, ready: make(chan struct{}), live: map[string]liveRow{}, trackMin: defaultTrackMin, ahead: defaultReadAhead()}, nil
}

// Config returns the validated configuration.
func (ix *Index) Config() Config { return ix.cfg }

// Open opens the database now (the "startup" mode) and waits for it. A
// failure is INDEX_FAILED and is memoized: every later search fails too.
func (ix *Index) Open(ctx context.Context) error {
	ix.startOpen()
	return ix.awaitReady(ctx)
}

// startOpen begins the one and only initial open in the background, so
// concurrent first searches share it and each may stop waiting on its own.
func (ix *Index) startOpen() {
	ix.openOnce.Do(func() {
		go func() {
			defer close(ix.ready)
			ix.opens.Add(1)
			db, err := openDatabase(context.Background(), ix.cfg)
			if err != nil {
				ix.openErr = err
				return
			}
			ix.db = db
			if db.notice != "" {
				ix.notice(db.notice)
			}
			ix.instance = uuid.NewString()
			ix.openErr = ix.loadGeneration(context.Background())
		}()
	})
}

func (ix *Index) awaitReady(ctx context.Context) error {
	select {
	case <-ix.ready:
		return ix.openErr
	case <-ctx.Done():
		return aborted(ctx)
	}
}

func (ix *Index) loadGeneration(ctx context.Context) error {
	var gen int64
	if err := ix.db.conn.QueryRowContext(ctx, `SELECT global_generation FROM search_state WHERE singleton = 1`).Scan(&gen); err != nil {
		return openFailed(err)
	}
	ix.dbGen = gen
	ix.nextLocal = gen
	var indexed bool
	if err := ix.db.conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM persisted_sessions)`).Scan(&indexed); err != nil {
		return openFailed(err)
	}
	ix.bulk = nil
	if !indexed {
		ix.bulk = newBulkTerms(ix.trackMin)
	}
	return nil
}

// begin enters the queue and readies the database, live overlay included,
// for one operation; the caller must call ix.queue.release() when it
// returns nil.
func (ix *Index) begin(ctx context.Context) error {
	if err := ix.beginCatalog(ctx); err != nil {
		return err
	}
	if err := ix.db.overlay(ctx); err != nil {
		ix.queue.release()
		return err
	}
	return nil
}

// beginCatalog is begin for an operation that reads the catalog only
// (status, listings): it makes no live overlay. Such an operation reads a
// live table only when this process has live sessions, whose writes made
// it, and its catch-up writes make it as every write does (commit).
func (ix *Index) beginCatalog(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if err := ix.queue.acquire(ctx); err != nil {
		return aborted(ctx)
	}
	fail := func(err error) error {
		ix.queue.release()
		return err
	}
	if ix.closed.Load() {
		return fail(closedError())
	}
	if err := checkCtx(ctx); err != nil {
		return fail(err)
	}
	ix.startOpen()
	if err := ix.awaitReady(ctx); err != nil {
		return fail(err)
	}
	if err := checkCtx(ctx); err != nil {
		return fail(err)
	}
	if err := ix.ensureHealthy(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// ensureHealthy reopens the index when its file was deleted, replaced or
// truncated underneath this process, or when an earlier operation found it
// damaged: results are never served from a file that is not the one at
// the configured path.
func (ix *Index) ensureHealthy(ctx context.Context) error {
	if ix.db != nil && !ix.db.moved() {
		return nil
	}
	moved := ix.db != nil
	if moved {
		ix.log.Warn("session-search index file changed underneath this process; reopening", "path", ix.cfg.Path)
		_ = ix.db.close()
		ix.db = nil
	}
	ix.opens.Add(1)
	db, err := openDatabase(ctx, ix.cfg)
	if err != nil {
		return err
	}
	ix.db = db
	switch {
	case db.notice != "":
		ix.notice(db.notice)
	case moved && db.created:
		ix.notice(fmt.Sprintf("the session-search index %s was deleted; rebuilding it from the session logs", ix.cfg.Path))
	}
	ix.resetMemory()
	return ix.loadGeneration(ctx)
}

// resetMemory forgets everything tied to the previous connection: the live
// overlay went with it, and every cursor minted before is now invalid.
func (ix *Index) resetMemory() {
	ix.instance = uuid.NewString()
	ix.live = map[string]liveRow{}
	ix.seenBinding = false
	ix.bindingID = 0
	ix.listed = false
	ix.memGen++
	ix.tracked.Store(nil)
	ix.phrases, ix.bulk = nil, nil
}

// discard drops the connection after a failure that suggests the file is
// damaged, so the next operation reopens (and if need be rebuilds) it.
func (ix *Index) discard(err error) {
	if ix.db == nil || !isCorruption(err) {
		return
	}
	ix.notice(fmt.Sprintf("the session-search index %s is damaged (%s); rebuilding it from the session logs", ix.cfg.Path, oneLine(err.Error())))
	// Only the file this connection opened is known to be ours; whatever
	// now sits at the path is judged afresh when it is reopened.
	if ix.db.path != "" {
		if ident, _, serr := identify(ix.db.path); serr == nil && ident == ix.db.ident {
			_ = removeDatabase(ix.db.path)
		}
	}
	_ = ix.db.close()
	ix.db = nil
}

// Close waits for the running operation, fails every queued and later one
// with INDEX_FAILED, waits for a pending open and closes the database. It
// is idempotent and returns the first call's result.
func (ix *Index) Close() error {
	ix.closeOnce.Do(func() {
		ix.closed.Store(true)
		_ = ix.queue.acquire(context.Background())
		defer ix.queue.release()
		ix.openOnce.Do(func() { close(ix.ready) }) // never opened: nothing to wait for
		<-ix.ready
		if ix.db != nil {
			ix.closeErr = ix.db.close()
			ix.db = nil
		}
	})
	return ix.closeErr
}
