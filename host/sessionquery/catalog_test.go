package sessionquery

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// fakeCatalog is a search engine with a catalog holding fixed summaries.
type fakeCatalog struct {
	sums  map[string]SessionSummary
	calls int
	fail  error
}

func (c *fakeCatalog) SearchSessions(context.Context, SessionSearchRequest) (SessionSearchPage, error) {
	return SessionSearchPage{}, nil
}
func (c *fakeCatalog) SearchEvents(context.Context, EventSearchRequest) (EventSearchPage, error) {
	return EventSearchPage{}, nil
}
func (c *fakeCatalog) Close() error { return nil }

func (c *fakeCatalog) Summaries(_ context.Context, req SummaryRequest) (SummaryPage, error) {
	c.calls++
	if c.fail != nil {
		return SummaryPage{}, c.fail
	}
	var p SummaryPage
	for _, s := range c.sums {
		p.Items = append(p.Items, s)
	}
	p.Total = len(p.Items)
	return p, nil
}

func (c *fakeCatalog) SummariesOf(_ context.Context, ids []string) (map[string]SessionSummary, error) {
	c.calls++
	if c.fail != nil {
		return nil, c.fail
	}
	out := map[string]SessionSummary{}
	for _, id := range ids {
		if s, ok := c.sums[id]; ok {
			out[id] = s
		}
	}
	return out, nil
}

func TestTitlesComeFromTheCatalogAndTheRestFromTheLogs(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fake := newFake().add(header("a", 1), userLog("one")...).add(header("b", 2), append(userLog("two"), titleEvent(1, "from the log"))...)
	fx.mount(t, fake)
	cat := &fakeCatalog{sums: map[string]SessionSummary{
		"a": {Header: header("a", 1), Persisted: true, Title: &TitleSnapshot{Title: "from the catalog"}},
		"c": {Header: header("c", 3), Persisted: true, TitleErr: &session.TitleError{Seq: 4, Message: "title must be a string"}},
	}}
	fx.svc.SetEngine(cat)
	results, err := fx.svc.ReadTitleSnapshots(context.Background(), []string{"a", "b", "c", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("results = %+v", results)
	}
	if r := results[0]; r.SessionID != "a" || r.Status != Fulfilled || r.Value.Title.Title != "from the catalog" {
		t.Errorf("a = %+v", r)
	}
	if r := results[1]; r.SessionID != "b" || r.Status != Fulfilled || r.Value.Title.Title != "from the log" {
		t.Errorf("b = %+v", r)
	}
	var te *session.TitleError
	if r := results[2]; r.SessionID != "c" || r.Status != Rejected || !errors.As(r.Reason, &te) || te.Seq != 4 {
		t.Errorf("c = %+v", r)
	}
	if got := fake.Inspected(); len(got) != 1 || got[0] != "b" {
		t.Errorf("inspected %v, want only b", got)
	}
}

func TestListSummariesWithoutACatalogReadsThePageFromTheLogs(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	w := "/w"
	ha, hb := header("a", 1), header("b", 2)
	ha.Cwd, hb.Cwd = &w, &w
	fake := newFake().add(ha, append(userLog("one"), titleEvent(1, "titled"))...).add(hb, userLog("two", "three")...).add(header("c", 3), userLog("x")...)
	fx.mount(t, fake)
	page, err := fx.svc.ListSummaries(context.Background(), SummaryRequest{Cwds: []string{w}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Total != 2 || !page.More || page.Items[0].Header.ID != "b" || page.Items[0].Events != 2 {
		t.Errorf("first page = %+v", page)
	}
	page, err = fx.svc.ListSummaries(context.Background(), SummaryRequest{Cwds: []string{w}, After: &SummaryPosition{CreatedAt: 2, ID: "b"}})
	if err != nil || len(page.Items) != 1 || page.Items[0].Title == nil || page.Items[0].Title.Title != "titled" || page.More {
		t.Errorf("second page = %+v, %v", page, err)
	}
	page, err = fx.svc.ListSummaries(context.Background(), SummaryRequest{IDPrefix: "b"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Header.ID != "b" || page.Total != 1 {
		t.Errorf("id prefix b = %+v, %v", page, err)
	}
	// A catalog that fails leaves the listing to the logs.
	fx.svc.SetEngine(&fakeCatalog{fail: errors.New("index unusable")})
	page, err = fx.svc.ListSummaries(context.Background(), SummaryRequest{})
	if err != nil || page.Total != 3 {
		t.Errorf("with a failing catalog = %+v, %v", page, err)
	}
}
