package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Search page limits: sessions per search, hits listed under each.
const (
	searchSessions   = 20
	searchHitsPerRow = 3
)

// searchPage shows /search results grouped by session: a row per session
// (its title and best match) and its strongest hits below it.
type searchPage struct {
	u      *ui
	query  string
	all    bool
	root   *tview.Flex
	list   *listView
	status string
	// targets maps a list row to what Enter opens.
	targets []searchTarget
	// catalog holds, for last activity and lineage, the summaries of the
	// hits' workspaces and their forks' parents, read as searches need
	// them (nil before the first).
	catalog catalog
}

type searchTarget struct {
	sessionID string
	seq       int
}

// searchResult is a search's groups and whether more sessions matched.
type searchResult struct {
	groups  []searchGroup
	more    bool
	catalog catalog
}

// searchGroup is one session of the results.
type searchGroup struct {
	hit   sessionquery.SessionHit
	title string
	hits  []sessionquery.EventHit
}

func (u *ui) searchCommand(arg string) {
	if arg == "" {
		u.notice(entryError, "give a query, e.g. /search flaky upload test")
		return
	}
	if u.opts.Query == nil {
		u.notice(entryError, "the session-query service is not mounted, so sessions cannot be searched")
		return
	}
	s := &searchPage{u: u, query: arg}
	th := u.th
	s.list = newListView(th)
	s.list.activate = func(int) { s.open() }
	s.list.SetInputCapture(s.key)
	title := newBar(th.bar, th.escape, func(int) ([]span, []span) {
		scope := "this workspace"
		if s.all {
			scope = "all workspaces"
		}
		return []span{{" Search ", th.bar.Bold(true)}, {oneLine(s.query), th.bar}, {" · " + scope, th.barDim}}, nil
	})
	footer := newBar(th.bar, th.escape, func(int) ([]span, []span) {
		return []span{{" ↑/↓ choose · Enter view · r resume · Tab all workspaces · Esc close", th.barDim}}, []span{{s.status + " ", th.bar}}
	})
	s.root = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(title, 1, 0, false).
		AddItem(s.list, 0, 1, true).
		AddItem(footer, 1, 0, false)
	u.openPage(pageSearch, s.root, s.list)
	s.run()
}

// run searches in the background; results replace the list.
func (s *searchPage) run() {
	u := s.u
	s.status = "searching…"
	s.list.setRows(nil)
	s.targets = nil
	query, all, ws, cat := s.query, s.all, u.ws, s.catalog
	u.pageCtx(pageSearch, func(ctx context.Context) {
		res, err := search(ctx, u.opts.Query, query, all, ws, cat)
		u.post.post(func() {
			if ctx.Err() != nil || s.query != query || s.all != all {
				return
			}
			if err != nil {
				s.status = ""
				s.list.setRows([]listRow{{left: []span{{" " + searchError(err), u.th.fail}}, header: true}})
				return
			}
			s.catalog = res.catalog
			s.show(res)
		})
	})
}

// search runs the session search and fetches each session's strongest
// hits and title, and what the catalog cat lacks for them.
func search(ctx context.Context, q Query, query string, all bool, ws session.Workspace, cat catalog) (searchResult, error) {
	req := sessionquery.SessionSearchRequest{Query: query, Limit: ptr(searchSessions)}
	if !all {
		req.SessionFilters = []sessionquery.SessionFilter{sessionquery.WorkspaceFilter(ws)}
	}
	page, err := q.SearchSessions(ctx, req)
	if err != nil {
		return searchResult{}, err
	}
	groups := make([]searchGroup, len(page.Items))
	ids := make([]string, len(page.Items))
	for i, hit := range page.Items {
		groups[i].hit = hit
		ids[i] = hit.Header.ID
		events, err := q.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: hit.Header.ID, Query: query, Limit: ptr(searchHitsPerRow)})
		if err == nil {
			groups[i].hits = events.Items
		} else if ctx.Err() != nil {
			return searchResult{}, ctx.Err()
		}
		if len(groups[i].hits) == 0 {
			groups[i].hits = []sessionquery.EventHit{hit.BestMatch}
		}
	}
	if len(ids) > 0 {
		if titles, err := q.ReadTitleSnapshots(ctx, ids); err == nil {
			for i, r := range titles {
				if r.Status == sessionquery.Fulfilled && r.Value.Title != nil && i < len(groups) {
					groups[i].title = r.Value.Title.Title
				}
			}
		}
	}
	if len(groups) > 0 {
		headers := make([]session.Header, len(groups))
		for i, g := range groups {
			headers[i] = g.hit.Header
		}
		cat = summariesFor(ctx, q, cat, headers)
	}
	return searchResult{groups: groups, more: page.NextCursor != nil, catalog: cat}, nil
}

func ptr[T any](v T) *T { return &v }

// searchError says what went wrong and what to do.
func searchError(err error) string {
	var qe *sessionquery.Error
	if errors.As(err, &qe) {
		switch qe.Code {
		case sessionquery.CodeSearchDisabled:
			return "search is disabled: the full-text index is not open (session_query.open_at is never, or it could not open; see the log); /resume still lists sessions"
		case sessionquery.CodeInvalidQuery:
			return "the query is not searchable: " + oneLine(qe.Message)
		}
		return oneLine(qe.Message) + " (" + qe.Code + ")"
	}
	return "search failed: " + oneLine(err.Error())
}

func (s *searchPage) show(res searchResult) {
	groups := res.groups
	u, th := s.u, s.u.th
	now := u.opts.Now()
	home := homeDir()
	current := ""
	if u.cur != nil {
		current = u.cur.agent.ID()
	}
	var rows []listRow
	s.targets = nil
	for _, g := range groups {
		h := g.hit.Header
		title := g.title
		if title == "" {
			title = "(untitled) " + shortID(h.ID)
		}
		left := []span{{" ", th.base}, {oneLine(title), th.bold}}
		if fork := s.catalog.forkOf(h, g.title); fork != "" {
			left = append(left, span{"  " + fork, th.dim})
		}
		if s.all || !u.ws.Holds(h.Cwd) {
			left = append(left, span{"  " + sanitize(shortPath(h.CwdOrEmpty(), home)), th.dim})
		}
		meta := age(now, s.catalog.lastActivity(h))
		if h.ID == current {
			meta += " · current"
		}
		rows = append(rows, listRow{left: left, right: []span{{meta + " ", th.dim}}})
		s.targets = append(s.targets, searchTarget{h.ID, g.hit.BestMatch.Seq})
		for _, hit := range g.hits {
			left := append([]span{{"    " + hitLabel(hit.Type) + " ", th.dim}}, highlightTerms(oneLine(hit.Snippet), s.query, th)...)
			rows = append(rows, listRow{left: left, right: []span{{fmt.Sprintf("#%d ", hit.Seq), th.dim}}})
			s.targets = append(s.targets, searchTarget{h.ID, hit.Seq})
		}
	}
	if len(rows) == 0 {
		rows = []listRow{{left: []span{{" no matches · Tab searches all workspaces", th.dim}}, header: true}}
	}
	s.list.selected = 0
	s.list.setRows(rows)
	s.status = plural(len(groups), "session")
	if res.more {
		s.status = fmt.Sprintf("the first %d sessions · refine the query for others", len(groups))
	}
}

// hitLabel names the kind of event a hit is in.
func hitLabel(typ string) string {
	switch typ {
	case session.TypeUserMessage:
		return "user:"
	case session.TypeAssistantMessage:
		return "reply:"
	case session.TypeToolResult:
		return "tool:"
	case session.TypeToolCall:
		return "call:"
	case session.TypeSessionTitle:
		return "title:"
	}
	return typ + ":"
}

// highlightTerms marks the query's words in a snippet (case-insensitive;
// the index also folds diacritics, so some matches stay unmarked).
func highlightTerms(text, query string, th *theme) []span {
	lower := strings.ToLower(text)
	if len(lower) != len(text) || text == "" {
		// Case folding changed byte offsets; show the snippet unmarked.
		return []span{{text, th.base}}
	}
	marks := make([]bool, len(text))
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, `"*()`)
		if w == "" {
			continue
		}
		for i := 0; ; {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			for k := i + j; k < i+j+len(w) && k < len(marks); k++ {
				marks[k] = true
			}
			i += j + len(w)
		}
	}
	var out []span
	start := 0
	for i := 1; i <= len(text); i++ {
		if i == len(text) || marks[i] != marks[start] {
			st := th.base
			if marks[start] {
				st = th.match
			}
			out = append(out, span{text[start:i], st})
			start = i
		}
	}
	return out
}

func (s *searchPage) key(ev *tcell.EventKey) *tcell.EventKey {
	switch ev.Key() {
	case tcell.KeyUp:
		s.list.move(-1)
	case tcell.KeyDown:
		s.list.move(1)
	case tcell.KeyPgUp:
		s.list.move(-10)
	case tcell.KeyPgDn:
		s.list.move(10)
	case tcell.KeyEnter:
		s.open()
	case tcell.KeyTab:
		s.all = !s.all
		s.run()
	case tcell.KeyEscape:
		s.u.closePage(pageSearch)
	case tcell.KeyRune:
		switch ev.Rune() {
		case 'r':
			if t, ok := s.target(); ok {
				s.u.resume(t.sessionID)
			}
		case 'q':
			s.u.closePage(pageSearch)
		}
	}
	return nil
}

func (s *searchPage) target() (searchTarget, bool) {
	i := s.list.current()
	if i < 0 || i >= len(s.targets) {
		return searchTarget{}, false
	}
	return s.targets[i], true
}

// open shows the selected session read-only, scrolled to the hit.
func (s *searchPage) open() {
	if t, ok := s.target(); ok {
		s.u.openViewer(t.sessionID, t.seq)
	}
}
