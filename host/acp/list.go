package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// ListSessions pages through the sessions the session-query service knows
// (live and persisted), newest first, optionally only those of one
// workspace. Each entry carries its title and the time of its last
// activity, all from the service's catalog: no log is read. Sessions
// without a workspace are not listed (ACP requires a cwd). The list is
// always an array, never null. It needs only the Catalog, so it answers as
// soon as the Backend build serves that (Early.ServeCatalog).
func (s *server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	catalog, done, err := s.enterCatalog()
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	defer done()
	ctx = bounded(ctx)
	req := sessionquery.SummaryRequest{RequireCwd: true, Limit: s.opts.PageSize}
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return sdk.ListSessionsResponse{}, invalidParams("cwd must be an absolute path: %s", *p.Cwd)
		}
		ws, err := session.ResolveWorkspace(*p.Cwd)
		if err != nil {
			return sdk.ListSessionsResponse{}, invalidParams("cwd: %v", err)
		}
		req.Cwds = ws.Forms()
	}
	if p.Cursor != nil {
		c, err := decodeCursor(*p.Cursor)
		if err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		req.After = &sessionquery.SummaryPosition{CreatedAt: c.CreatedAt, ID: c.ID}
	}
	page, err := catalog.ListSummaries(ctx, req)
	if err != nil {
		return sdk.ListSessionsResponse{}, internalError("cannot list sessions: %v", err)
	}
	out := sdk.ListSessionsResponse{Sessions: make([]sdk.SessionInfo, 0, len(page.Items))}
	for _, sum := range page.Items {
		h := sum.Header
		info := sdk.SessionInfo{SessionId: sdk.SessionId(h.ID), Cwd: h.CwdOrEmpty(), UpdatedAt: sdk.Ptr(isoTime(sum.UpdatedAt()))}
		if sum.Title != nil {
			info.Title = sdk.Ptr(sum.Title.Title)
		}
		out.Sessions = append(out.Sessions, info)
	}
	if page.More {
		last := page.Items[len(page.Items)-1].Header
		out.NextCursor = sdk.Ptr(encodeCursor(listCursor{CreatedAt: last.CreatedAt, ID: last.ID}))
	}
	return out, nil
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
