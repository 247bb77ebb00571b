package sessionquery

import (
	"context"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
)

// fakePersistence is the shared scriptable backend as a Persistence.
// Inspect returns the stored slices themselves, the worst case for the
// service's detached-copy guarantee.
type fakePersistence struct{ *sessiontest.Backend }

func newFake() *fakePersistence {
	b := sessiontest.New()
	b.Shared = true
	return &fakePersistence{b}
}

// add stores a session whose revision is its ID.
func (f *fakePersistence) add(h session.Header, events ...session.Event) *fakePersistence {
	f.Add(h, events...)
	return f
}

func (f *fakePersistence) List(ctx context.Context) ([]PersistedSnapshot, error) {
	return sessiontest.ListAs(ctx, f.Backend, func(h session.Header, rev string) PersistedSnapshot {
		return PersistedSnapshot{Header: h, Revision: rev}
	})
}

// fixture is a service over a fresh registry.
type fixture struct {
	svc  *Service
	live *session.Registry
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	reg := session.NewRegistry()
	svc, err := New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return &fixture{svc: svc, live: reg}
}

func (fx *fixture) mount(t testing.TB, p Persistence) {
	t.Helper()
	unmount := fx.svc.Mount(p)
	t.Cleanup(unmount)
}

// attach makes a live session with the given header and user messages.
func (fx *fixture) attach(t testing.TB, h session.Header, texts ...string) *session.Live {
	t.Helper()
	l := newLive(t, h, nil)
	for _, text := range texts {
		mustAppend(t, l, session.TypeUserMessage, userText(text))
	}
	if err := fx.live.Attach(l); err != nil {
		t.Fatal(err)
	}
	return l
}

// userLog is a persisted log of user messages.
func userLog(texts ...string) []session.Event {
	out := make([]session.Event, len(texts))
	for i, text := range texts {
		out[i] = ev(i, session.TypeUserMessage, userText(text))
	}
	return out
}

func titleEvent(seq int, title string) session.Event {
	return ev(seq, session.TypeSessionTitle, session.SessionTitle{
		Title: title, MessageSeqs: []int{}, Source: rawJSONMust(`{"kind":"user"}`),
	})
}

func rawJSONMust(s string) []byte { return []byte(s) }

func ids(records []SessionRecord) []string { return recordIDs(records) }

func equalIDs(got []string, want ...string) bool { return slices.Equal(got, want) }
