package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

var _ sessionquery.SearchEngine = (*Index)(nil)

// SearchSessions searches the whole corpus, one hit per session with its
// strongest event (session-query.md §2.5, §3.11).
func (ix *Index) SearchSessions(ctx context.Context, req sessionquery.SessionSearchRequest) (sessionquery.SessionSearchPage, error) {
	r, err := ix.cfg.normalizeSessions(req)
	if err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	if err := ix.begin(ctx); err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	defer ix.queue.release()
	b, err := ix.reconcile(ctx, nil)
	if err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	// A continuation page is cut from the ranking its first page made,
	// after that page prepared the query: preparing it again would only
	// probe the vocabulary for every untracked token, on every page of the
	// model-facing session_search (which reads up to six).
	if b.Persistence != nil && len(r.eventFilters) == 0 && r.cursor == nil {
		if err := ix.prepareQuery(ctx, quoteFTS(r.query)); err != nil {
			if ctx.Err() != nil {
				return sessionquery.SessionSearchPage{}, aborted(ctx)
			}
			if isCorruption(err) {
				return sessionquery.SessionSearchPage{}, ix.queryFailed(err)
			}
			// Tracking a term only makes later searches cheaper: this one
			// is answered by FTS5 alone.
			ix.log.Warn("session-search: cannot track a common term", "err", err)
		}
	}
	if err := checkCtx(ctx); err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	var page sessionquery.SessionSearchPage
	err = ix.read(ctx, func(tx querier) error {
		var err error
		page, err = ix.querySessions(ctx, tx, r, b.Persistence != nil)
		return err
	})
	return page, err
}

// SearchEvents searches one session and returns its header from the same
// indexed generation, even without hits.
func (ix *Index) SearchEvents(ctx context.Context, req sessionquery.EventSearchRequest) (sessionquery.EventSearchPage, error) {
	r, err := ix.cfg.normalizeEvents(req)
	if err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	if err := ix.begin(ctx); err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	defer ix.queue.release()
	b, err := ix.reconcile(ctx, nil)
	if err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	if err := checkCtx(ctx); err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	var page sessionquery.EventSearchPage
	err = ix.read(ctx, func(tx querier) error {
		var err error
		page, err = ix.queryEvents(ctx, tx, r, b.Persistence != nil)
		return err
	})
	return page, err
}

// read runs fn in one read transaction, so every statement of a search
// sees the same snapshot even while other processes write.
func (ix *Index) read(ctx context.Context, fn func(q querier) error) error {
	db := ix.db
	if _, err := db.conn.ExecContext(ctx, `BEGIN`); err != nil {
		if ctx.Err() != nil {
			return aborted(ctx)
		}
		return ix.queryFailed(err)
	}
	err := fn(db)
	if _, rerr := db.conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil && !isQueryError(err) {
		if ctx.Err() != nil {
			return aborted(ctx)
		}
		return ix.queryFailed(err)
	}
	return err
}

func (ix *Index) queryFailed(err error) error {
	ix.discard(err)
	return indexFailed(err, "session-search query failed: %s", detail(err))
}

func (ix *Index) querySessions(ctx context.Context, tx querier, r sessionsRequest, persistedVisible bool) (sessionquery.SessionSearchPage, error) {
	sp, err := compileSessionPredicates(r.sessionFilters)
	if err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	ep, err := compileEventPredicates(r.eventFilters)
	if err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	if err := checkSessionsBudget(sp, ep); err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	var gen int64
	if err := tx.QueryRowContext(ctx, `SELECT global_generation FROM search_state WHERE singleton = 1`).Scan(&gen); err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	generation := fmt.Sprintf("%d.%d", gen, ix.memGen)
	fp := sessionsFingerprint(r)
	var offset int64
	if r.cursor != nil {
		if offset, err = decodeCursor(*r.cursor, ix.instance, scopeSessions, fp, generation); err != nil {
			return sessionquery.SessionSearchPage{}, err
		}
	}
	match := quoteFTS(r.query)
	want := offset + int64(r.limit) + 1
	merged, err := ix.rankSessions(ctx, tx, rankKey{fingerprint: fp, generation: generation}, match, sp, ep, persistedVisible, want)
	if err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	page := sessionquery.SessionSearchPage{Items: []sessionquery.SessionHit{}}
	if int64(len(merged)) <= offset {
		return page, nil
	}
	merged = merged[offset:]
	more := len(merged) > r.limit
	if more {
		merged = merged[:r.limit]
	}
	for _, c := range merged {
		snip, err := snippet(ctx, tx, c, match, ix.cfg.SnippetChars)
		if err != nil {
			return sessionquery.SessionSearchPage{}, err
		}
		page.Items = append(page.Items, sessionquery.SessionHit{
			SessionRecord: sessionquery.SessionRecord{Header: c.header, Live: c.live, Persisted: c.persisted},
			BestMatch:     hit(c, c.header.ID, snip),
		})
	}
	if more {
		next := encodeCursor(cursorPayload{Version: cursorVersion, Instance: ix.instance, Scope: scopeSessions,
			Fingerprint: fp, Generation: generation, Offset: offset + int64(r.limit)})
		page.NextCursor = &next
	}
	return page, nil
}

// target is the session an event search runs in.
type target struct {
	live       bool
	key        int64
	header     session.Header
	generation string
}

func (ix *Index) resolveTarget(ctx context.Context, tx querier, id string, persistedVisible bool) (target, error) {
	var t target
	var gen int64
	cols := `session_key, generation, ` + headerColumns
	err := tx.QueryRowContext(ctx, `SELECT `+cols+` FROM live_sessions c WHERE c.session_id = ?`, id).
		Scan(append([]any{&t.key, &gen}, scanHeader(&t.header)...)...)
	if err == nil {
		t.live = true
		t.generation = fmt.Sprintf("live:%d", gen)
		return t, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return t, err
	}
	if persistedVisible {
		err = tx.QueryRowContext(ctx, `SELECT `+cols+` FROM persisted_sessions c WHERE c.session_id = ?`, id).
			Scan(append([]any{&t.key, &gen}, scanHeader(&t.header)...)...)
		if err == nil {
			t.generation = fmt.Sprintf("persisted:%d:%d", ix.epoch, gen)
			return t, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return t, err
		}
	}
	return t, sessionquery.Errorf(sessionquery.CodeSessionNotFound, `session "%s" not found`, id)
}

func (ix *Index) queryEvents(ctx context.Context, tx querier, r eventsRequest, persistedVisible bool) (sessionquery.EventSearchPage, error) {
	ep, err := compileEventPredicates(r.filters)
	if err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	if err := checkEventsBudget(ep); err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	t, err := ix.resolveTarget(ctx, tx, r.sessionID, persistedVisible)
	if err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	fp := eventsFingerprint(r)
	var offset int64
	if r.cursor != nil {
		if offset, err = decodeCursor(*r.cursor, ix.instance, scopeEvents, fp, t.generation); err != nil {
			return sessionquery.EventSearchPage{}, err
		}
	}
	match := quoteFTS(r.query)
	var cands []candidate
	if t.live {
		all, liveStats, err := liveMatches(ctx, tx, match, predicates{}, ep, persistedVisible, t.key)
		if err != nil {
			return sessionquery.EventSearchPage{}, err
		}
		if err := onPersistedScale(ctx, tx, match, all, liveStats, nil); err != nil {
			return sessionquery.EventSearchPage{}, err
		}
		slices.SortFunc(all, compareEvents)
		if int64(len(all)) > offset {
			cands = all[offset:min(int64(len(all)), offset+int64(r.limit)+1)]
		}
	} else {
		if cands, err = persistedEvents(ctx, tx, match, ep, t.key, int64(r.limit)+1, offset); err != nil {
			return sessionquery.EventSearchPage{}, err
		}
	}
	page := sessionquery.EventSearchPage{Items: []sessionquery.EventHit{}, Session: t.header}
	more := len(cands) > r.limit
	if more {
		cands = cands[:r.limit]
	}
	for _, c := range cands {
		c.live = t.live
		snip, err := snippet(ctx, tx, c, match, ix.cfg.SnippetChars)
		if err != nil {
			return sessionquery.EventSearchPage{}, err
		}
		page.Items = append(page.Items, hit(c, t.header.ID, snip))
	}
	if more {
		next := encodeCursor(cursorPayload{Version: cursorVersion, Instance: ix.instance, Scope: scopeEvents,
			Fingerprint: fp, Generation: t.generation, Offset: offset + int64(r.limit)})
		page.NextCursor = &next
	}
	return page, nil
}

// rankKey identifies one ranking: the normalized request and the indexed
// generation it was computed on (the same pair a cursor is bound to).
type rankKey struct{ fingerprint, generation string }

// rankedSessions is the last ranking computed, kept so the next pages of
// the same request are cut from it instead of ranked again (the
// model-facing session_search reads up to five pages in a row).
type rankedSessions struct {
	key       rankKey
	live      []candidate    // every matching live session's strongest
	persisted sessionRanking // nil when persistence is not visible
	merged    []candidate
	// exact is how many leading entries of merged are the true ranking:
	// all of them when every persisted winner was resolved (complete),
	// else as many as persisted sessions were asked for (a live session
	// may sort anywhere).
	exact    int64
	complete bool
}

// rankSessions returns the sessions matching the query, best first, at
// least want of them when there are that many, from the kept ranking when
// it answers the same request on the same generation. Only as many
// persisted sessions are resolved as the pages asked for so far need: a
// first page of 20 reads the rows of about 20 sessions, and the next page
// resolves on from there.
func (ix *Index) rankSessions(ctx context.Context, tx querier, key rankKey, match string, sp, ep predicates, persistedVisible bool, want int64) ([]candidate, error) {
	k := ix.ranked
	if k != nil && k.key == key && (k.complete || want <= k.exact) {
		return k.merged, nil
	}
	ix.ranked = nil
	if k == nil || k.key != key {
		k = &rankedSessions{key: key}
		if err := k.rank(ctx, tx, match, sp, ep, persistedVisible, ix.ftsOnly, ix.ahead); err != nil {
			return nil, err
		}
	}
	k.merged, k.exact, k.complete = k.live, 0, true
	if k.persisted != nil {
		persisted, all, err := k.persisted.top(ctx, tx, int(want))
		if err != nil {
			return nil, err
		}
		k.merged = append(slices.Clone(k.live), persisted...)
		slices.SortStableFunc(k.merged, compareSessions)
		k.exact, k.complete = want, all
	}
	ix.ranked = k
	return k.merged, nil
}

// sessionRanking is the persisted sessions matching a query, strongest
// first, made exact as far as the pages asked for need: by FTS5 over
// every match (persistedRanking) or from the term summaries
// (impactRanking).
type sessionRanking interface {
	// top returns the n strongest sessions (all of them, with all true,
	// once every one is known), each with its strongest document.
	top(ctx context.Context, q querier, n int) (out []candidate, all bool, err error)
}

// rank ranks the query's persisted sessions and scores its live ones on
// the same scale.
func (k *rankedSessions) rank(ctx context.Context, tx querier, match string, sp, ep predicates, persistedVisible, ftsOnly bool, ahead readAhead) error {
	var plan *impactPlan
	if persistedVisible && ep.count() == 0 && !ftsOnly {
		var err error
		if plan, err = planImpact(ctx, tx, match); err != nil {
			return err
		}
	}
	var persistedHits *int64
	if plan != nil {
		plan.ahead = ahead
		r, err := plan.rankImpact(ctx, tx, match, sp)
		if err != nil {
			return err
		}
		if r == nil {
			plan = nil // FTS5 ranks it better
		} else {
			k.persisted = r
		}
	}
	if plan == nil && persistedVisible {
		r, err := rankPersisted(ctx, tx, match, sp, ep)
		if err != nil {
			return err
		}
		k.persisted = r
		if ep.count() == 0 {
			// Every persisted match was streamed: the live scores'
			// rescaling needs no count of its own.
			persistedHits = &r.matches
		}
	}
	live, liveStats, err := liveMatches(ctx, tx, match, sp, ep, persistedVisible, 0)
	if err != nil {
		return err
	}
	if plan != nil {
		err = plan.scoreLive(ctx, tx, live)
	} else {
		err = onPersistedScale(ctx, tx, match, live, liveStats, persistedHits)
	}
	if err != nil {
		return err
	}
	k.live = bestPerSession(live)
	return nil
}
