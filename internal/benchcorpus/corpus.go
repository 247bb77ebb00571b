package benchcorpus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// Options sizes a corpus.
type Options struct {
	Sessions int
	// Seed selects the corpus; the same seed gives the same bytes.
	Seed uint64
	// TurnsMin and TurnsMax bound the turns of a session (the mean event
	// count of a session is about 33 per turn).
	TurnsMin, TurnsMax int
	// Progress, if set, is called after each session is written.
	Progress func(done, total int)
}

// Presets: small is about 200,000 events, large about 2,000,000. Two
// other shapes of about the large one's size check that no cost grows with
// the wrong dimension: huge is 100 sessions of 300 to 600 turns (10,000 to
// 20,000 events each), tiny is 50,000 one-turn sessions.
var (
	Small = Options{Sessions: 1000, Seed: 1, TurnsMin: 2, TurnsMax: 10}
	Large = Options{Sessions: 10000, Seed: 1, TurnsMin: 2, TurnsMax: 10}
	Huge  = Options{Sessions: 100, Seed: 1, TurnsMin: 300, TurnsMax: 600}
	Tiny  = Options{Sessions: 50000, Seed: 1, TurnsMin: 1, TurnsMax: 1}
)

// Preset returns the named preset ("small", "large", "huge" or "tiny").
func Preset(name string) (Options, error) {
	switch name {
	case "small":
		return Small, nil
	case "large":
		return Large, nil
	case "huge":
		return Huge, nil
	case "tiny":
		return Tiny, nil
	}
	return Options{}, fmt.Errorf("unknown corpus preset %q (want small, large, huge or tiny)", name)
}

// Planted tokens, whose frequencies the generator controls.
const (
	RareID        = "req-7f3a-91"
	MidIdentifier = "parseWorkspaceManifest"
	CommonWord    = "the"
	Phrase        = "failing test"
	CJKWord       = "搜索"
	// Planted by mixed sentences (each in about one prompt in eighty, the
	// identifier in forty): a CJK
	// word inside unspaced runs, a Japanese and a Korean word, and the
	// part of IdentifierForms a part query names.
	CJKInRun       = "数据库"
	JapaneseWord   = "データベース"
	KoreanWord     = "데이터베이스"
	IdentifierPart = "SessionHeader"
)

// Version names what Generate writes; it changes whenever the same seed and
// options would give other bytes, so a corpus kept on disk by an earlier
// generator is recognized as stale (2: mixed-script sentences).
const Version = 2

// Manifest describes a generated corpus.
type Manifest struct {
	Sessions int
	Events   int
	Bytes    int64
	// RareSession is the one session whose log contains RareID, once.
	RareSession string
	// IDs lists every session id in creation order.
	IDs []string
}

// Generate writes a corpus into st, which must not hold any of its
// sessions yet.
func Generate(ctx context.Context, st *store.Store, opts Options) (Manifest, error) {
	if opts.Sessions <= 0 {
		return Manifest{}, errors.New("benchcorpus: Sessions must be positive")
	}
	if opts.TurnsMin <= 0 || opts.TurnsMax < opts.TurnsMin {
		return Manifest{}, errors.New("benchcorpus: need 0 < TurnsMin <= TurnsMax")
	}
	m := Manifest{Sessions: opts.Sessions}
	rare := opts.Sessions / 2
	var recent []generated // fork parents
	for i := range opts.Sessions {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		r := rand.New(rand.NewPCG(opts.Seed, uint64(i)))
		g := newSession(r, i, opts, i == rare)
		if i > 0 && r.IntN(20) == 0 && len(recent) > 0 {
			g.fork(recent[r.IntN(len(recent))])
		}
		g.turns(opts.TurnsMin + r.IntN(opts.TurnsMax-opts.TurnsMin+1))
		w, err := st.Create(g.header, g.events)
		if err != nil {
			return m, fmt.Errorf("benchcorpus: session %d: %w", i, err)
		}
		if err := w.Close(); err != nil {
			return m, fmt.Errorf("benchcorpus: session %d: %w", i, err)
		}
		m.IDs = append(m.IDs, g.header.ID)
		m.Events += len(g.events)
		m.Bytes += g.bytes
		if i == rare {
			m.RareSession = g.header.ID
		}
		recent = append(recent, generated{header: g.header, events: g.events})
		if len(recent) > 32 {
			recent = recent[1:]
		}
		if opts.Progress != nil {
			opts.Progress(i+1, opts.Sessions)
		}
	}
	return m, nil
}

type generated struct {
	header session.Header
	events []session.Event
}

var workspaces = []string{
	"/home/dev/src/dsh", "/home/dev/src/api-gateway", "/home/dev/src/billing", "/home/dev/src/web-frontend",
	"/home/dev/src/infra", "/home/dev/src/ml-pipeline", "/home/dev/src/docs", "/home/dev/src/mobile-app",
	"/home/dev/src/search-service", "/home/dev/src/auth", "/home/dev/scratch", "/home/dev/src/cli-tools",
}

// Sample writes sessions sessions of the Small mix (about 200 events each)
// into a new store in dir and returns it with its entries: the input the
// per-package corpus benchmarks (the store's reads, the extractor's
// documents) share.
func Sample(ctx context.Context, dir string, sessions int) (*store.Store, []store.Entry, error) {
	st := store.New(dir, store.Options{})
	opts := Small
	opts.Sessions = sessions
	if _, err := Generate(ctx, st, opts); err != nil {
		return nil, nil, err
	}
	entries, err := st.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	return st, entries, nil
}

// SessionIn generates one session of the corpus's shape in cwd: whole
// turns until it holds at least events events, then its title. The same
// seed gives the same session, with the id given.
func SessionIn(seed uint64, id, cwd string, events int) (session.Header, []session.Event) {
	r := rand.New(rand.NewPCG(seed, 0))
	b := newSession(r, 0, Options{Seed: seed}, false)
	b.header.ID, b.header.Cwd = id, &cwd
	for len(b.events) < events {
		b.oneTurn()
	}
	b.title()
	return b.header, b.events
}
