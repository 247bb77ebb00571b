package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// Search beside enormous events (issue 14): the same history is searched
// without, then with, one session holding a 5 MB pasted log and one
// holding a 50 MB one, each a single user/message line. The history is its
// own small corpus under <dir>/big, so the main corpus is never changed.
const (
	bigHistorySessions = 300
	bigEventBytes      = 5 << 20
	hugeEventBytes     = 50 << 20
	bigSessionID       = "big-event-5mb"
	hugeSessionID      = "big-event-50mb"
)

// bigQueries are the queries searched beside the big events: words the
// pasted logs hold on every line, and one they do not hold.
var bigQueries = []query{
	{"common word", benchcorpus.CommonWord},
	{"phrase", benchcorpus.Phrase},
	{"rare id", benchcorpus.RareID},
}

// bigResult is one side of the comparison.
type bigResult struct {
	// FirstSearch is catching up with the logs and answering one search.
	FirstSearch time.Duration `json:"firstSearch"`
	Queries     []bigQuery    `json:"queries"`
}

type bigQuery struct {
	query
	Sessions latency `json:"sessions"`
	// Events is SearchEvents in the 5 MB event's session (with), or in
	// the best ordinary session (without): a snippet of the big event.
	Events latency `json:"events"`
}

func bigLayout(l layout) layout { return layoutOf(filepath.Join(l.dir, "big")) }

// partBigWithout generates the small history afresh, indexes it and
// measures the queries.
func partBigWithout(ctx context.Context, l layout, runs int, logf func(string, ...any)) (bigResult, error) {
	bl := bigLayout(l)
	if err := os.RemoveAll(bl.dir); err != nil {
		return bigResult{}, err
	}
	opts := benchcorpus.Small
	opts.Sessions = bigHistorySessions
	st := store.New(bl.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	if _, err := benchcorpus.Generate(ctx, st, opts); err != nil {
		return bigResult{}, err
	}
	logf("generated a %d-session history in %s", bigHistorySessions, bl.dir)
	return measureBig(ctx, bl, runs, "", logf)
}

// partBigWith adds the two big logs to the history indexed by
// partBigWithout and measures the same queries; this part's peak RSS is
// the figure held to issue 14's 100 MB.
func partBigWith(ctx context.Context, l layout, runs int, logf func(string, ...any)) (bigResult, error) {
	bl := bigLayout(l)
	for _, b := range []struct {
		id   string
		size int
	}{{bigSessionID, bigEventBytes}, {hugeSessionID, hugeEventBytes}} {
		if err := writePastedLog(bl.sessions, b.id, b.size); err != nil {
			return bigResult{}, err
		}
	}
	logf("wrote a 5 MB and a 50 MB event")
	return measureBig(ctx, bl, runs, bigSessionID, logf)
}

func measureBig(ctx context.Context, bl layout, runs int, eventsIn string, logf func(string, ...any)) (bigResult, error) {
	var res bigResult
	e, err := openEngine(bl)
	if err != nil {
		return res, err
	}
	defer e.close()
	start := time.Now()
	if _, err := e.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: bigQueries[0].Text}); err != nil {
		return res, err
	}
	res.FirstSearch = time.Since(start)
	for _, q := range bigQueries {
		bq := bigQuery{query: q}
		target := eventsIn
		bq.Sessions, err = measure(2, runs, func() error {
			p, err := e.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.Text})
			if err == nil && eventsIn == "" && len(p.Items) > 0 {
				target = p.Items[0].Header.ID
			}
			return err
		})
		if err != nil {
			return res, fmt.Errorf("%s: %w", q.Name, err)
		}
		if target != "" {
			bq.Events, err = measure(2, runs, func() error {
				_, err := e.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: target, Query: q.Text})
				return err
			})
			if err != nil {
				return res, fmt.Errorf("%s events: %w", q.Name, err)
			}
		}
		logf("%s: SearchSessions %s, SearchEvents %s", q.Name, pp(bq.Sessions), pp(bq.Events))
		res.Queries = append(res.Queries, bq)
	}
	return res, nil
}

// writePastedLog writes a session whose one event is a user message of
// about size bytes of log lines, streamed to the file so that writing it
// costs no memory; the store's writer would refuse the 50 MB one, as dsh
// never writes such an event, but another tool or an older dsh might.
func writePastedLog(sessions, id string, size int) (err error) {
	cwd := "/bench/pasted"
	dir := filepath.Join(sessions, store.WorkspaceSlug(&cwd), id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "session.jsonl"))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"type":"session","version":0,"id":%q,"createdAt":1800000000000,"cwd":%q,"delegationDepth":0}`+"\n", id, cwd)
	fmt.Fprint(w, `{"type":"user/message","seq":0,"time":1800000000000,"data":{"content":[{"type":"text","text":"`)
	for n, i := 0, 0; n < size; i++ {
		k, _ := fmt.Fprintf(w, `2026-12-03T10:00:%02dZ INFO worker %d: the request %d finished; the failing test suite reran\n`, i%60, i%7, i)
		n += k
	}
	fmt.Fprint(w, `"}],"source":{"kind":"user"},"role":"user","id":"m0"},"surfaceOp":"append"}`+"\n")
	return w.Flush()
}
