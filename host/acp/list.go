package acp

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// ListSessions pages through the sessions the session-query service knows
// (live and persisted), newest first, optionally only those of one
// workspace. Each entry carries its title and the time of its last
// activity. The list is always an array, never null.
func (s *server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	defer done()
	ctx = bounded(ctx)
	var filters []sessionquery.SessionFilter
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return sdk.ListSessionsResponse{}, invalidParams("cwd must be an absolute path: %s", *p.Cwd)
		}
		cwd := filepath.Clean(*p.Cwd)
		filters = append(filters, sessionquery.SessionFilter{Kind: sessionquery.KindCwd, NullableValues: []*string{&cwd}})
	}
	var after *listCursor
	if p.Cursor != nil {
		c, err := decodeCursor(*p.Cursor)
		if err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		after = &c
	}
	records, err := s.opts.Catalog.FilterSessions(ctx, filters)
	if err != nil {
		return sdk.ListSessionsResponse{}, internalError("cannot list sessions: %v", err)
	}
	page, more := pageOf(records, after, s.opts.PageSize)
	out := sdk.ListSessionsResponse{Sessions: make([]sdk.SessionInfo, 0, len(page))}
	titles := s.titles(ctx, page)
	for _, r := range page {
		h := r.Header
		info := sdk.SessionInfo{SessionId: sdk.SessionId(h.ID), Cwd: h.CwdOrEmpty()}
		updated := h.CreatedAt
		if t := titles[h.ID]; t != nil {
			info.Title = sdk.Ptr(t.Title)
			updated = max(updated, t.UpdatedAt)
		}
		if s.opts.LastActivity != nil {
			if at, ok := s.opts.LastActivity(ctx, h.ID); ok {
				updated = max(updated, at.UnixMilli())
			}
		}
		info.UpdatedAt = sdk.Ptr(isoTime(updated))
		out.Sessions = append(out.Sessions, info)
	}
	if more {
		last := page[len(page)-1].Header
		out.NextCursor = sdk.Ptr(encodeCursor(listCursor{CreatedAt: last.CreatedAt, ID: last.ID}))
	}
	return out, nil
}

// titles reads the titles of one page in a single batch; a session whose
// log cannot be read is listed without a title.
func (s *server) titles(ctx context.Context, page []sessionquery.SessionRecord) map[string]*session.Title {
	ids := make([]string, len(page))
	for i, r := range page {
		ids[i] = r.Header.ID
	}
	out := make(map[string]*session.Title, len(ids))
	if len(ids) == 0 {
		return out
	}
	results, err := s.opts.Catalog.ReadTitleSnapshots(ctx, ids)
	if err != nil {
		s.log.Warn("acp: session titles not readable", "err", err)
		return out
	}
	for _, r := range results {
		if r.Status == sessionquery.Fulfilled && r.Value != nil {
			out[r.SessionID] = r.Value.Title
		}
	}
	return out
}

// listCursor is the position after the last session of a page, in the
// listing order (createdAt descending, then id), so pages stay stable while
// sessions are created.
type listCursor struct {
	CreatedAt int64  `json:"c"`
	ID        string `json:"i"`
}

func encodeCursor(c listCursor) string {
	return base64.RawURLEncoding.EncodeToString(session.MustMarshal(c))
}

func decodeCursor(s string) (listCursor, error) {
	var c listCursor
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" {
		return c, invalidParams("invalid cursor; pass the nextCursor of a previous session/list answer, or none for the first page")
	}
	return c, nil
}

// before reports whether a session sorts before the cursor's position.
func (c listCursor) before(h session.Header) bool {
	if h.CreatedAt != c.CreatedAt {
		return h.CreatedAt > c.CreatedAt
	}
	return h.ID <= c.ID
}

// pageOf sorts the records into listing order and returns the page after
// the cursor and whether more follow. Sessions without a workspace are not
// listed: ACP requires a cwd.
func pageOf(records []sessionquery.SessionRecord, after *listCursor, size int) ([]sessionquery.SessionRecord, bool) {
	rs := make([]sessionquery.SessionRecord, 0, len(records))
	for _, r := range records {
		if r.Header.Cwd != nil && (after == nil || !after.before(r.Header)) {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b sessionquery.SessionRecord) int {
		if c := cmp.Compare(b.Header.CreatedAt, a.Header.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Header.ID, b.Header.ID)
	})
	if len(rs) > size {
		return rs[:size], true
	}
	return rs, false
}
