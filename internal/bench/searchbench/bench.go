package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/bench"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// query is one benchmarked search.
type query struct{ name, text string }

var queries = []query{
	{"rare id", benchcorpus.RareID},
	{"identifier", benchcorpus.MidIdentifier},
	{"common word", benchcorpus.CommonWord},
	{"two-word phrase", benchcorpus.Phrase},
	{"CJK word", benchcorpus.CJKWord},
}

type benchmark struct {
	o        options
	dir      string
	st       *store.Store
	ci       corpusInfo
	reg      *session.Registry
	svc      *sessionquery.Service
	ix       *searchindex.Index
	bare     *bareIndex
	logf     func(string, ...any)
	build    time.Duration
	buildCPU time.Duration // user+system time of the whole process during the build
	events   int64
}

func newBench(ctx context.Context, dir string, st *store.Store, ci corpusInfo, o options, logf func(string, ...any)) (*benchmark, error) {
	b := &benchmark{o: o, dir: dir, st: st, ci: ci, logf: logf, reg: session.NewRegistry()}
	var err error
	if b.svc, err = sessionquery.New(sessionquery.DefaultConfig(), b.reg); err != nil {
		return nil, err
	}
	b.svc.Mount(searchindex.NewStorePersistence(st))
	path := filepath.Join(dir, "index", "session-query.db")
	if !o.reuse {
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			_ = os.Remove(p)
		}
	}
	if b.ix, err = searchindex.New(searchindex.DefaultConfig(path), b.svc, searchindex.Options{}); err != nil {
		return nil, err
	}
	if err := b.ix.Open(ctx); err != nil {
		return nil, err
	}
	logf("building the index…")
	start, cpu0 := time.Now(), cpuTime()
	build := b.ix.Rebuild
	if o.reuse {
		build = func(ctx context.Context, _ func(int, int)) error { return b.ix.Sync(ctx) }
	}
	if err := build(ctx, nil); err != nil {
		return nil, err
	}
	b.build, b.buildCPU = time.Since(start), cpuTime()-cpu0
	status, err := b.ix.Status(ctx)
	if err != nil {
		return nil, err
	}
	b.events = status.Events
	logf("built in %s (%d sessions, %d events, %d MB)", b.build.Round(time.Millisecond), status.Sessions, status.Events, status.SizeBytes>>20)
	logf("building the bare FTS5 baseline…")
	if b.bare, err = buildBare(ctx, filepath.Join(dir, "index", "bare.db"), st, o.reuse); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *benchmark) close() {
	_ = b.ix.Close()
	b.bare.close()
}

// row is one query's measurements.
type row struct {
	q                  query
	sessP50, sessP95   time.Duration
	eventP50, eventP95 time.Duration
	bareP50            time.Duration
	rgP50              time.Duration
	rg                 string // "" when measured, else why not
	hits               int
}

type results struct {
	rows        []row
	noChange    time.Duration
	afterAppend time.Duration
	maxRSSBytes int64
}

func (b *benchmark) measure(ctx context.Context) (results, error) {
	var res results
	if !b.o.noLive {
		entries, err := b.st.List(ctx)
		if err != nil {
			return res, err
		}
		if err := liveCopy(ctx, b.st, b.reg, entries[len(entries)/3].Header.ID); err != nil {
			return res, err
		}
	}
	rgPath, rgErr := lookRG()
	for _, q := range queries {
		if !strings.Contains(q.name, b.o.only) {
			continue
		}
		b.logf("measuring %s (%q)…", q.name, q.text)
		r := row{q: q}
		var target string
		s, err := bench.Measure(2, b.o.runs, func() error {
			p, err := b.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.text})
			if err == nil {
				r.hits = len(p.Items)
				if len(p.Items) > 0 {
					target = p.Items[0].Header.ID
				}
			}
			return err
		})
		if err != nil {
			return res, fmt.Errorf("%s: %w", q.name, err)
		}
		r.sessP50, r.sessP95 = bench.Percentiles(s)
		if target != "" {
			e, err := bench.Measure(2, b.o.runs, func() error {
				_, err := b.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: target, Query: q.text})
				return err
			})
			if err != nil {
				return res, fmt.Errorf("%s events: %w", q.name, err)
			}
			r.eventP50, r.eventP95 = bench.Percentiles(e)
		}
		bs, err := bench.Measure(2, b.o.runs, func() error { return b.bare.query(ctx, q.text) })
		if err != nil {
			return res, fmt.Errorf("%s bare: %w", q.name, err)
		}
		r.bareP50, _ = bench.Percentiles(bs)
		if rgErr != nil {
			r.rg = "not installed"
		} else {
			rs, err := bench.Measure(1, min(b.o.runs, 7), func() error { return runRG(ctx, rgPath, q.text, b.ci.root) })
			if err != nil {
				r.rg = err.Error()
			} else {
				r.rgP50, _ = bench.Percentiles(rs)
			}
		}
		res.rows = append(res.rows, r)
	}
	b.logf("measuring reconciliation…")
	nc, err := bench.Measure(3, 50, func() error { return b.ix.Sync(ctx) })
	if err != nil {
		return res, err
	}
	res.noChange, _ = bench.Percentiles(nc)
	if res.afterAppend, err = b.appendAndSync(ctx); err != nil {
		return res, err
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		res.maxRSSBytes = ru.Maxrss * 1024
	}
	return res, nil
}

// appendAndSync appends 100 events (one complete turn) to a persisted
// session, flushes them (which journals the change) and times the next
// reconciliation; it repeats this and returns the median.
func (b *benchmark) appendAndSync(ctx context.Context) (time.Duration, error) {
	entries, err := b.st.List(ctx)
	if err != nil {
		return 0, err
	}
	id := entries[len(entries)/2].Header.ID
	var samples []time.Duration
	for range 7 {
		w, _, events, err := b.st.Open(ctx, id)
		if err != nil {
			return 0, err
		}
		turn := 0
		for _, e := range events {
			if e.Type == session.TypeTurnStart {
				turn++
			}
		}
		batch := turnOf100(len(events), turn, events[len(events)-1].Time)
		err = w.Append(batch...)
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if err := b.ix.Sync(ctx); err != nil {
			return 0, err
		}
		samples = append(samples, time.Since(start))
	}
	p50, _ := bench.Percentiles(samples)
	return p50, nil
}

// turnOf100 is a complete 100-event turn starting at seq next.
func turnOf100(next, turn int, t int64) []session.Event {
	var out []session.Event
	add := func(typ string, data any, opts ...session.AppendOption) {
		t++
		e := session.Event{Type: typ, Seq: next + len(out), Time: t, Data: session.MustMarshal(data)}
		if session.IsSurfaceType(typ) {
			e.SurfaceOp = session.OpAppend
		}
		for _, o := range opts {
			o(&e)
		}
		out = append(out, e)
	}
	add(session.TypeTurnStart, session.TurnStart{Turn: turn})
	add(session.TypeUserMessage, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock("benchmark follow-up about the flaky cache test")}, Source: session.UserSource, ID: fmt.Sprintf("bench-u-%d", next)})
	add(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: 0})
	for i := range 94 {
		add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: 0, Chunk: session.MustMarshal(map[string]string{"type": "text-delta", "text": fmt.Sprintf("word%d ", i)})})
	}
	add(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: 0, Message: session.Message{Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock("the cache test is flaky because of a race")}, Source: session.ModelSource("bench", "m"), ID: fmt.Sprintf("bench-a-%d", next)}})
	add(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: 0})
	add(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
	return out
}

// cpuTime is the process's user plus system CPU time so far: on a shared
// machine it shows how much work a build did, whatever the wall clock says.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
