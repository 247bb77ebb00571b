package acp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestListPagesNewestFirstWithTitlesAndUpdatedAt(t *testing.T) {
	w := newWorld(t)
	h := start(t, w, func(su *setup) { su.opts.PageSize = 2 })
	mine, other := workspace(t), workspace(t)
	var ids []sdk.SessionId
	for range 3 {
		ids = append(ids, h.newSession(mine))
	}
	h.newSession(other)
	w.provider.add(reply("", "ok"))
	if _, err := h.prompt(ids[0], "name this session"); err != nil {
		t.Fatal(err)
	}
	// The last event of ids[1] is later than its creation and any title
	// (written to its log after it closed).
	if err := w.CloseSession(w.agent(string(ids[1]))); err != nil {
		t.Fatal(err)
	}
	w.disk.appendRaw(string(ids[1]), session.Event{Type: session.TypeUserMessage, Time: 1_800_000_000_000,
		Data:      session.MustMarshal(session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock("later")}, Source: session.UserSource, ID: "u"}),
		SurfaceOp: session.OpAppend})

	first, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{Cwd: &mine})
	if err != nil {
		t.Fatal(err)
	}
	if first.NextCursor == nil || len(first.Sessions) != 2 {
		t.Fatalf("first page = %+v", first)
	}
	second, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{Cwd: &mine, Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if second.NextCursor != nil || len(second.Sessions) != 1 {
		t.Fatalf("second page = %+v", second)
	}
	all := append(first.Sessions, second.Sessions...)
	var got []sdk.SessionId
	for _, s := range all {
		got = append(got, s.SessionId)
		if s.Cwd != mine {
			t.Errorf("%s has cwd %s", s.SessionId, s.Cwd)
		}
	}
	if want := []sdk.SessionId{ids[2], ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want newest first %v", got, want)
	}
	titled := all[2]
	if titled.Title == nil || *titled.Title != "name this session" {
		t.Errorf("title = %v", titled.Title)
	}
	if titled.UpdatedAt == nil || *titled.UpdatedAt != "2026-01-01T00:00:00.000Z" {
		t.Errorf("updatedAt of the prompted session = %v (its title time)", titled.UpdatedAt)
	}
	if u := all[1].UpdatedAt; u == nil || *u != "2027-01-15T08:00:00.000Z" {
		t.Errorf("updatedAt from the last activity = %v", u)
	}
	if all[0].Title != nil {
		t.Errorf("untitled session has title %q", *all[0].Title)
	}

	everything, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{})
	if err != nil || len(everything.Sessions) != 2 || everything.NextCursor == nil {
		t.Fatalf("unfiltered first page = %+v, %v", everything, err)
	}
}

func TestListRejectsBadCursorAndRelativeCwd(t *testing.T) {
	h := start(t, newWorld(t))
	for name, req := range map[string]sdk.ListSessionsRequest{
		"cursor": {Cursor: sdk.Ptr("%%%")},
		"cwd":    {Cwd: sdk.Ptr("relative/dir")},
	} {
		_, err := h.conn.ListSessions(h.ctx, req)
		if re, ok := err.(*sdk.RequestError); !ok || re.Code != -32602 {
			t.Errorf("%s: error = %v, want invalid params", name, err)
		}
	}
	resp, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(workspace(t))})
	if err != nil || resp.Sessions == nil || len(resp.Sessions) != 0 {
		t.Errorf("empty workspace = %+v, %v", resp, err)
	}
}

// appendRaw appends an event to a stored log as another process would.
func (d *memDisk) appendRaw(id string, e session.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.logs[id]
	e.Seq = len(l.events)
	l.events = append(l.events, e)
}

// TestListCwdFilterIsTheWorkspaceRule: session/list's cwd filter keeps a
// workspace's sessions whether the editor names it through a symbolic link,
// with a trailing slash or directly (session.Workspace), and a session
// recorded through the link stays out of a listing by the real path.
func TestListCwdFilterIsTheWorkspaceRule(t *testing.T) {
	h, real, link, direct, viaLink := linkedSessions(t)
	list := func(cwd string) []sdk.SessionId {
		t.Helper()
		res, err := h.conn.ListSessions(h.ctx, sdk.ListSessionsRequest{Cwd: &cwd})
		if err != nil {
			t.Fatal(err)
		}
		var ids []sdk.SessionId
		for _, s := range res.Sessions {
			ids = append(ids, s.SessionId)
		}
		slices.Sort(ids)
		return ids
	}
	both := []sdk.SessionId{direct, viaLink}
	slices.Sort(both)
	if got := list(link); !slices.Equal(got, both) {
		t.Errorf("through the link: %v, want %v", got, both)
	}
	if got := list(link + "/"); !slices.Equal(got, both) {
		t.Errorf("through the link with a trailing slash: %v, want %v", got, both)
	}
	if got := list(real + "/"); !slices.Equal(got, []sdk.SessionId{direct}) {
		t.Errorf("by the real path: %v, want only %v", got, direct)
	}
}

// TestLoadAndResumeFollowTheListsWorkspaceRule: a session session/list
// shows for a cwd can be loaded and resumed with that cwd, through a link
// or with a trailing slash, and one it hides is refused like an unknown id.
func TestLoadAndResumeFollowTheListsWorkspaceRule(t *testing.T) {
	h, real, link, direct, viaLink := linkedSessions(t)
	for _, id := range []sdk.SessionId{direct, viaLink} {
		if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	load := func(id sdk.SessionId, cwd string) error {
		_, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}})
		return err
	}
	if err := load(direct, link+"/"); err != nil {
		t.Errorf("loading the real path's session through the link: %v", err)
	}
	if _, err := h.conn.ResumeSession(h.ctx, sdk.ResumeSessionRequest{SessionId: viaLink, Cwd: link}); err != nil {
		t.Errorf("resuming the link's session through the link: %v", err)
	}
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: viaLink}); err != nil {
		t.Fatal(err)
	}
	re, ok := load(viaLink, real+"/").(*sdk.RequestError)
	if !ok || re.Code != -32002 {
		t.Errorf("loading the link's session by the real path = %v, want not found in this workspace", re)
	}
}

// linkedSessions starts a server with two sessions of one workspace: one
// created at its real path, one through a symbolic link to it.
func linkedSessions(t *testing.T) (h *harness, real, link string, direct, viaLink sdk.SessionId) {
	t.Helper()
	h = start(t, newWorld(t))
	real = workspace(t)
	link = filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	return h, real, link, h.newSession(real), h.newSession(link)
}
