package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// seed is one past session: its only prompt and its workspace ("" for the
// backend's).
type seed struct{ prompt, cwd string }

// seedSessions runs each prompt in its own session, in order, and closes
// it, so they are persisted. It returns the session ids by prompt.
func seedSessions(t *testing.T, b *backend, seeds ...seed) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, s := range seeds {
		prompt, cwd := s.prompt, s.cwd
		if cwd == "" {
			cwd = b.cwd
		}
		a, err := b.NewSession(context.Background(), cwd)
		if err != nil {
			t.Fatal(err)
		}
		a.Followup(userText(prompt))
		if err := a.WhenIdle(context.Background()); err != nil {
			t.Fatal(err)
		}
		ids[prompt] = a.ID()
		if err := b.CloseSession(a); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func TestSearchFindsAPriorSessionOpensItAndResumesIt(t *testing.T) {
	b := newBackend(t, newScripted(
		textReply("", "Noted: the zebra migration runs on Fridays."),
		textReply("", "Unrelated answer."),
	))
	ids := seedSessions(t, b, seed{prompt: "plan the zebra migration"})
	d := startUI(t, b, nil)
	d.submit("something else")
	d.waitText("Unrelated answer.")

	d.submit("/search zebra")
	screen := d.waitText("Search zebra", "plan the zebra migration", "reply: Noted: the zebra migration runs on Fridays.", "1 session")
	if !strings.Contains(screen, "user: plan the zebra migration") {
		t.Errorf("the user's hit is not listed under its session:\n%s", screen)
	}
	d.key(tcell.KeyEnter)
	screen = d.waitText("Viewing", "read-only", "› plan the zebra migration", "Noted: the zebra migration runs on Fridays.")
	if strings.Contains(screen, "Unrelated answer.") {
		t.Errorf("the viewer shows the current session instead of the hit:\n%s", screen)
	}

	d.typeText("r")
	screen = d.waitText("○ ready", "plan the zebra migration")
	if strings.Contains(screen, "Viewing") || strings.Contains(screen, "Search zebra") {
		t.Errorf("resuming left a page open:\n%s", screen)
	}
	if !strings.Contains(row(screen, 0), shortID(ids["plan the zebra migration"])) {
		t.Errorf("the header does not show the resumed session: %q", row(screen, 0))
	}
	out := d.exit()
	if out.Res.SessionID != ids["plan the zebra migration"] {
		t.Errorf("exit reports %s, want the resumed session", out.Res.SessionID)
	}
}

func TestSearchWithoutAnEngineSaysSearchIsDisabled(t *testing.T) {
	b := newBackend(t, newScripted())
	b.query.SetEngine(nil)
	d := startUI(t, b, nil)
	d.submit("/search anything")
	d.waitText("search is disabled")
	d.key(tcell.KeyEscape)
	d.waitGone("Search anything")
}

func TestResumePickerFiltersAndTabShowsEveryWorkspace(t *testing.T) {
	b := newBackend(t, newScripted(
		textReply("", "one"), textReply("", "two"), textReply("", "three"),
	))
	elsewhere := t.TempDir()
	ids := seedSessions(t, b,
		seed{prompt: "fix the upload bug"},
		seed{prompt: "write release notes"},
		seed{prompt: "tune the cache layer", cwd: elsewhere},
	)
	d := startUI(t, b, nil)
	d.submit("/resume")
	screen := d.waitText("Resume a session", "this workspace", "fix the upload bug", "write release notes", "current")
	if strings.Contains(screen, "tune the cache layer") {
		t.Errorf("another workspace's session is listed by default:\n%s", screen)
	}
	d.key(tcell.KeyTab)
	d.waitText("all workspaces", "tune the cache layer")
	d.key(tcell.KeyTab)
	d.waitGone("tune the cache layer")

	d.typeText("release")
	screen = d.waitGone("fix the upload bug")
	if !strings.Contains(screen, "write release notes") {
		t.Fatalf("the filter hid the match:\n%s", screen)
	}
	d.key(tcell.KeyEnter)
	screen = d.waitText("○ ready", "› write release notes", "two")
	if !strings.Contains(row(screen, 0), shortID(ids["write release notes"])) {
		t.Errorf("header = %q", row(screen, 0))
	}
}

func TestResumeWithAnIDResumesDirectly(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "one")))
	ids := seedSessions(t, b, seed{prompt: "only session"})
	d := startUI(t, b, nil)
	d.submit("/resume " + ids["only session"])
	screen := d.waitText("› only session", "○ ready")
	if strings.Contains(screen, "Resume a session") {
		t.Errorf("the picker stayed open:\n%s", screen)
	}
}

func TestATenThousandEventSessionResumesAtItsEndAndScrolls(t *testing.T) {
	b := newBackend(t, newScripted())
	h, events := genSession(t, 10_000)
	h.ID = "10000000-0000-4000-8000-000000000000"
	h.Cwd = &b.cwd
	w, err := b.store.Create(h, events)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	last := 0
	for _, e := range events {
		if e.Type == "turn/start" {
			last++
		}
	}
	d := startUI(t, b, func(o *Options) { o.Resume = h.ID })
	end := d.waitText(fmt.Sprintf("Fixed the bug in turn %d:", last), "○ ready")
	d.key(tcell.KeyPgUp)
	d.key(tcell.KeyPgUp)
	up := d.waitText("scrolled up")
	if up == end {
		t.Fatal("PgUp did not scroll")
	}
	d.key(tcell.KeyEnd)
	d.waitText(fmt.Sprintf("Fixed the bug in turn %d:", last))
	d.waitGone("scrolled up")
}

func TestResumeAndSearchShowForkLineageAndLastActivity(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "the walrus plan is ready")))
	ids := seedSessions(t, b, seed{prompt: "draft the walrus plan"})
	parent := ids["draft the walrus plan"]
	fork, err := b.ForkSession(context.Background(), parent, session.ForkLatest)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CloseSession(fork); err != nil {
		t.Fatal(err)
	}
	// A session created ten days ago that changed two hours ago.
	old := testNow.Add(-10 * 24 * time.Hour).UnixMilli()
	h := session.Header{ID: "aaaaaaaa-old", CreatedAt: old, Cwd: session.Ptr(b.cwd), DelegationDepth: session.Ptr(0), Version: session.FormatVersion}
	recent := testNow.Add(-2 * time.Hour).UnixMilli()
	w, err := b.store.Create(h, []session.Event{
		{Type: session.TypeTurnStart, Seq: 0, Time: old, Data: session.MustMarshal(session.TurnStart{Turn: 0})},
		{Type: session.TypeUserMessage, Seq: 1, Time: recent, SurfaceOp: session.OpAppend, Data: session.MustMarshal(userText("walrus revisited"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	d := startUI(t, b, nil)
	d.submit("/resume")
	screen := d.waitText("Resume a session", "fork of "+shortID(parent), "2h ago")
	if strings.Contains(screen, "10d ago") {
		t.Errorf("the picker shows the creation time instead of the last activity:\n%s", screen)
	}
	d.key(tcell.KeyEscape)
	d.waitGone("Resume a session")
	d.submit("/search walrus")
	screen = d.waitText("Search walrus", "fork of "+shortID(parent), "2h ago")
	if strings.Contains(screen, "10d ago") {
		t.Errorf("search shows the creation time instead of the last activity:\n%s", screen)
	}
	d.exit()
}

// recordingQuery records the catalog reads the UI asks for.
type recordingQuery struct {
	Query
	mu   sync.Mutex
	reqs []sessionquery.SummaryRequest
}

func (q *recordingQuery) ListSummaries(ctx context.Context, req sessionquery.SummaryRequest) (sessionquery.SummaryPage, error) {
	q.mu.Lock()
	q.reqs = append(q.reqs, req)
	q.mu.Unlock()
	return q.Query.ListSummaries(ctx, req)
}

func (q *recordingQuery) requests() []sessionquery.SummaryRequest {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.reqs)
}

// The picker reads this workspace's sessions (and the titles of their
// forks' parents elsewhere) when it opens, and every workspace's only once
// Tab shows them: its cost follows what it shows, not the history.
func TestResumePickerReadsThisWorkspaceUntilTabShowsEveryOne(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "one"), textReply("", "two")))
	elsewhere := t.TempDir()
	ids := seedSessions(t, b,
		seed{prompt: "fix the upload bug"},
		seed{prompt: "tune the cache layer", cwd: elsewhere},
	)
	// A fork here of the session elsewhere, with a title of its own.
	parent := ids["tune the cache layer"]
	src, events, err := b.store.Inspect(context.Background(), parent)
	if err != nil {
		t.Fatal(err)
	}
	h, seedEvents, err := session.Fork(src, events, session.ForkLatest, "ffffffff-fork", testNow.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	h.Cwd = session.Ptr(b.cwd)
	first := -1
	for _, e := range seedEvents {
		if e.Type == session.TypeUserMessage && first < 0 {
			first = e.Seq
		}
	}
	seedEvents = append(seedEvents, session.Event{Type: session.TypeSessionTitle, Seq: len(seedEvents), Time: testNow.UnixMilli(),
		Data: session.MustMarshal(session.SessionTitle{Title: "cache layer, second try", MessageSeqs: []int{first}, Source: []byte(`{"kind":"user"}`)})})
	w, err := b.store.Create(h, seedEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	q := &recordingQuery{Query: b.query}
	d := startUI(t, b, func(o *Options) { o.Query = q })
	d.submit("/resume")
	screen := d.waitText("Resume a session", "fix the upload bug", "cache layer, second try", "fork of "+shortID(parent)+" tune the cache layer")
	if strings.Count(screen, "tune the cache layer") != 1 {
		t.Errorf("the session elsewhere is listed by default:\n%s", screen)
	}
	reqs := q.requests()
	if len(reqs) != 1 || len(reqs[0].Cwds) == 0 || !slices.Contains(reqs[0].Cwds, b.cwd) {
		t.Fatalf("opening the picker read %+v, want this workspace's sessions alone", reqs)
	}
	d.key(tcell.KeyTab)
	d.waitText("all workspaces", "tune the cache layer  /")
	d.key(tcell.KeyTab)
	d.waitGone("tune the cache layer  /")
	d.key(tcell.KeyTab)
	d.waitText("all workspaces", "tune the cache layer  /")
	if reqs := q.requests(); len(reqs) != 2 || reqs[1].Cwds != nil {
		t.Errorf("after Tab the picker read %+v, want one more read of every workspace", reqs)
	}
	d.exit()
}

// /search reads the catalog of its hits' workspaces, each once, for last
// activity and lineage: never the whole history.
func TestSearchReadsTheCatalogOfItsHitsWorkspacesOnly(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "one"), textReply("", "two"), textReply("", "three")))
	elsewhere, unrelated := t.TempDir(), t.TempDir()
	seedSessions(t, b,
		seed{prompt: "the walrus here"},
		seed{prompt: "the walrus elsewhere", cwd: elsewhere},
		seed{prompt: "nothing to see", cwd: unrelated},
	)
	q := &recordingQuery{Query: b.query}
	d := startUI(t, b, func(o *Options) { o.Query = q })
	d.submit("/search walrus")
	d.waitText("Search walrus", "the walrus here", "1 session")
	if reqs := q.requests(); len(reqs) != 1 || !slices.Equal(reqs[0].Cwds, []string{b.cwd}) {
		t.Fatalf("the search read the catalog %+v, want this workspace's alone", reqs)
	}
	d.key(tcell.KeyTab)
	d.waitText("all workspaces", "the walrus elsewhere", "2 sessions")
	if reqs := q.requests(); len(reqs) != 2 || !slices.Equal(reqs[1].Cwds, []string{elsewhere}) {
		t.Errorf("the search of every workspace read the catalog %+v, want one more read of the other hit's workspace", reqs)
	}
	d.exit()
}
