package sessionquery

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// SessionSummary is what a listing shows of one session, served by the
// catalog (the search index) without reading the log: its header, title,
// number of events, time of the last event and log size.
type SessionSummary struct {
	Header    session.Header `json:"header"`
	Live      bool           `json:"live"`
	Persisted bool           `json:"persisted"`
	// Title is the folded title (nil: untitled). TitleErr is set instead
	// when the last session/title event is malformed.
	Title    *TitleSnapshot `json:"title,omitempty"`
	TitleErr error          `json:"-"`
	// Events counts the log's events; LastEventAt is the time of the last
	// one (Unix ms, 0 without events).
	Events      int   `json:"events"`
	LastEventAt int64 `json:"lastEventAt,omitempty"`
	// LogBytes is the persisted log's size (0 for a session never written).
	LogBytes int64 `json:"logBytes"`
	// Unreadable is why the log's events could not be read (then Events,
	// Title and LastEventAt are zero); "" for a readable log.
	Unreadable string `json:"unreadable,omitempty"`
	// Invalid is why the log fails the replay validation a resume applies
	// (session.ValidateLog); "" for a valid log.
	Invalid string `json:"invalid,omitempty"`
}

// UpdatedAt is the latest of the creation time, the last event and the
// title's update: when the session last changed.
func (s SessionSummary) UpdatedAt() int64 {
	at := max(s.Header.CreatedAt, s.LastEventAt)
	if s.Title != nil {
		at = max(at, s.Title.UpdatedAt)
	}
	return at
}

// SummaryRequest selects a page of summaries, newest first (createdAt
// descending, then id in byte order).
type SummaryRequest struct {
	// Cwds keeps one workspace's sessions: those whose stored cwd is one of
	// these strings, exactly (session.Workspace.Forms; nil: every
	// workspace).
	Cwds []string
	// RequireCwd drops sessions without a workspace.
	RequireCwd bool
	// IDPrefix keeps the sessions whose id starts with it ("": every id),
	// so that resolving an id or a prefix reads only its matches.
	IDPrefix string
	// After continues after this position (nil: from the newest).
	After *SummaryPosition
	// Limit bounds the page (0: no bound).
	Limit int
}

// SummaryPosition is a place in the summary order.
type SummaryPosition struct {
	CreatedAt int64
	ID        string
}

// SummaryPage is one page of summaries. Total counts every session the
// request selects, before After and Limit.
type SummaryPage struct {
	Items []SessionSummary
	More  bool
	Total int
}

// Catalog is the optional capability of a SearchEngine that keeps every
// session's summary (the SQLite index does). With one installed, listings
// and title reads cost what their answer holds, not what the history holds.
type Catalog interface {
	// Summaries brings the catalog up to date and returns one page.
	Summaries(ctx context.Context, req SummaryRequest) (SummaryPage, error)
	// SummariesOf brings the catalog up to date and returns the summaries
	// of the given ids that it holds (missing ids are absent).
	SummariesOf(ctx context.Context, ids []string) (map[string]SessionSummary, error)
}

func (s *Service) catalog() Catalog {
	c, _ := s.searchEngine().(Catalog)
	return c
}

// ListSummaries returns a page of session summaries, newest first. With a
// catalog installed it reads no log; without one (search disabled) it
// lists the corpus and reads every selected log on the page.
func (s *Service) ListSummaries(ctx context.Context, req SummaryRequest) (SummaryPage, error) {
	if err := cancelled(ctx); err != nil {
		return SummaryPage{}, err
	}
	if c := s.catalog(); c != nil {
		// A catalog that cannot answer (its file is unusable) leaves the
		// listing to the logs themselves, as without one.
		page, err := c.Summaries(ctx, req)
		if err == nil || cancelled(ctx) != nil {
			return page, err
		}
	}
	records, sizes, err := s.listCorpus(ctx)
	if err != nil {
		return SummaryPage{}, err
	}
	var page SummaryPage
	var picked []SessionRecord
	for _, r := range SortSummaryOrder(records) {
		h := r.Header
		if (req.Cwds != nil && (h.Cwd == nil || !slices.Contains(req.Cwds, *h.Cwd))) || (req.RequireCwd && h.Cwd == nil) || !strings.HasPrefix(h.ID, req.IDPrefix) {
			continue
		}
		page.Total++
		if req.After != nil && !req.After.Before(h) {
			continue
		}
		if req.Limit > 0 && len(picked) == req.Limit {
			page.More = true
			continue
		}
		picked = append(picked, r)
	}
	for _, r := range picked {
		sum := SessionSummary{Header: r.Header, Live: r.Live, Persisted: r.Persisted, LogBytes: sizes[r.Header.ID]}
		src, err := s.load(ctx, r.Header.ID)
		if err == nil {
			sum = SummarizeLog(src.header, src.events)
			sum.Live, sum.Persisted = r.Live, r.Persisted
			sum.LogBytes = sizes[r.Header.ID]
		} else if cause := cancelled(ctx); cause != nil {
			return SummaryPage{}, cause
		} else {
			sum.Unreadable = err.Error()
		}
		page.Items = append(page.Items, sum)
	}
	return page, nil
}

// Before reports whether h sorts strictly after the position (it belongs
// to a later page).
func (p SummaryPosition) Before(h session.Header) bool {
	if h.CreatedAt != p.CreatedAt {
		return h.CreatedAt < p.CreatedAt
	}
	return h.ID > p.ID
}

// SortSummaryOrder sorts records in summary order (createdAt descending,
// then id in byte order) in place and returns them.
func SortSummaryOrder(records []SessionRecord) []SessionRecord {
	sortByCreatedThenBytes(records)
	return records
}

// SummarizeLog folds a log into its summary (Live and Persisted unset,
// LogBytes zero: the caller knows them).
func SummarizeLog(h session.Header, events []session.Event) SessionSummary {
	sum := SessionSummary{Header: h.Clone(), Events: len(events)}
	if err := session.ValidateLog(h, events); err != nil {
		sum.Invalid = err.Error()
	}
	if n := len(events); n > 0 {
		sum.LastEventAt = events[n-1].Time
	}
	sum.Title, sum.TitleErr = session.FoldTitle(events)
	return sum
}

// titlesFromCatalog answers a title batch from the catalog where it can:
// it returns the results it resolved and the ids left for the slow path.
func (s *Service) titlesFromCatalog(ctx context.Context, ids []string) (map[string]TitleResult, error) {
	c := s.catalog()
	if c == nil {
		return nil, nil
	}
	sums, err := c.SummariesOf(ctx, ids)
	if err != nil {
		if cause := cancelled(ctx); cause != nil {
			return nil, cause
		}
		// The slow path reports whatever is wrong, per id.
		return nil, nil
	}
	out := make(map[string]TitleResult, len(sums))
	for id, sum := range sums {
		if sum.Unreadable != "" {
			continue // the slow path reports the log's own error
		}
		if sum.TitleErr != nil {
			out[id] = TitleResult{SessionID: id, Status: Rejected, Reason: sum.TitleErr}
			continue
		}
		out[id] = TitleResult{SessionID: id, Status: Fulfilled, Value: &TitleObservation{Session: sum.Header.Clone(), Title: sum.Title}}
	}
	return out, nil
}

func sortByCreatedThenBytes(records []SessionRecord) {
	slices.SortStableFunc(records, func(a, b SessionRecord) int {
		if c := cmp.Compare(b.Header.CreatedAt, a.Header.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Header.ID, b.Header.ID)
	})
}

// catalogRecords lists the corpus from the catalog: every session's header
// as the catalog holds it after catching up.
func (s *Service) catalogRecords(ctx context.Context, c Catalog) ([]SessionRecord, error) {
	page, err := c.Summaries(ctx, SummaryRequest{})
	if err != nil {
		return nil, err
	}
	records := make([]SessionRecord, len(page.Items))
	for i, sum := range page.Items {
		records[i] = SessionRecord{Header: sum.Header, Live: sum.Live, Persisted: sum.Persisted}
	}
	sortNewestFirst(records)
	return records, nil
}
