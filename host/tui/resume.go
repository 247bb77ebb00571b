package tui

import (
	"context"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// resumePicker lists past sessions through the session-query service:
// this workspace's by default, every workspace after Tab. Each scope is
// read from the catalog when it is first shown, so opening the picker
// costs this workspace's sessions, not the whole history's.
type resumePicker struct {
	u   *ui
	p   *picker
	all bool
	// records are the summaries (title, size, last activity) of the
	// widest scope read so far, newest first.
	records []sessionquery.SessionSummary
	// byID holds the records and the parents of this workspace's forks.
	byID catalog
	// loaded says this workspace's sessions were read, loadedAll every
	// workspace's; loadingAll that the second read runs.
	loaded, loadedAll, loadingAll bool
	// direct is the id prefix given with /resume; a unique match is
	// resumed without showing the list.
	direct string
}

func (u *ui) resumeCommand(arg string) {
	if u.opts.Query == nil {
		if arg != "" {
			u.resume(arg)
			return
		}
		u.notice(entryError, "the session-query service is not mounted, so past sessions cannot be listed; /resume <id> still works")
		return
	}
	r := &resumePicker{u: u, direct: arg}
	r.p = newPicker(u, r.heading, "↑/↓ choose · Enter resume · Tab all workspaces · Esc close")
	r.p.extra = func(ev *tcell.EventKey) bool {
		if ev.Key() == tcell.KeyTab {
			r.all = !r.all
			if r.all && !r.loadedAll {
				r.loadAll()
			}
			r.rebuild()
			return true
		}
		return false
	}
	r.p.choose = func(it pickItem) { u.resume(it.value.(string)) }
	r.p.status = "loading…"
	r.p.filter.SetText(arg)
	r.p.open()
	if arg != "" {
		// An id prefix is looked up in every workspace.
		r.loadAll()
		return
	}
	u.pageCtx(pagePicker, r.load)
}

func (r *resumePicker) heading() []span {
	th := r.u.th
	scope := "this workspace"
	if r.all {
		scope = "all workspaces"
	}
	return []span{{" Resume a session ", th.bar.Bold(true)}, {"· " + scope, th.bar}}
}

// load lists this workspace's sessions in one catalog read (titles and
// sizes included, no log is read), with the titles of their forks'
// parents that live elsewhere, and posts them; it stops when the picker
// closes.
func (r *resumePicker) load(ctx context.Context) {
	u := r.u
	page, err := u.opts.Query.ListSummaries(ctx, sessionquery.SummaryRequest{Cwds: u.ws.Forms()})
	var byID catalog
	if err == nil {
		headers := make([]session.Header, len(page.Items))
		for i, s := range page.Items {
			headers[i] = s.Header
		}
		byID = catalogOf(page.Items).withParents(ctx, u.opts.Query, headers)
	}
	u.post.post(func() {
		if r.loadedAll {
			return // the wider read won
		}
		if err != nil {
			r.p.status = "listing failed: " + oneLine(err.Error())
			return
		}
		r.records, r.byID, r.loaded = page.Items, byID, true
		r.p.status = ""
		r.rebuild()
	})
}

// loadAll lists every workspace's sessions in one catalog read, the first
// time they are shown or an id prefix is looked up.
func (r *resumePicker) loadAll() {
	if r.loadingAll {
		return
	}
	r.loadingAll = true
	u := r.u
	u.pageCtx(pagePicker, func(ctx context.Context) {
		page, err := u.opts.Query.ListSummaries(ctx, sessionquery.SummaryRequest{})
		u.post.post(func() {
			if err != nil {
				r.loadingAll = false
				r.p.status = "listing failed: " + oneLine(err.Error())
				return
			}
			r.records, r.byID, r.loaded, r.loadedAll = page.Items, catalogOf(page.Items), true, true
			r.p.status = ""
			r.rebuild()
			r.resolveDirect()
		})
	})
}

func (r *resumePicker) inWorkspace(rec sessionquery.SessionSummary) bool {
	return r.u.ws.Holds(rec.Header.Cwd)
}

// rebuild turns the records into rows for the current scope.
func (r *resumePicker) rebuild() {
	u, th := r.u, r.u.th
	now := u.opts.Now()
	home := homeDir()
	var items []pickItem
	current := ""
	if u.cur != nil {
		current = u.cur.agent.ID()
	}
	for _, rec := range r.records {
		if !r.all && !r.inWorkspace(rec) {
			continue
		}
		h := rec.Header
		title, titled := "", rec.Title != nil
		if titled {
			title = rec.Title.Title
		}
		left := []span{{" ", th.base}}
		if titled {
			left = append(left, span{oneLine(title), th.bold})
		} else {
			left = append(left, span{"(untitled) " + shortID(h.ID), th.dim})
		}
		fork := r.byID.forkOf(h, title)
		if fork != "" {
			left = append(left, span{"  " + fork, th.dim})
		}
		if r.all {
			left = append(left, span{"  " + sanitize(shortPath(h.CwdOrEmpty(), home)), th.dim})
		}
		var meta []string
		meta = append(meta, age(now, r.byID.lastActivity(h)))
		if rec.Persisted && rec.LogBytes > 0 {
			meta = append(meta, byteSize(rec.LogBytes))
		}
		disabled := false
		switch {
		case h.ID == current:
			meta = append(meta, "current")
			disabled = true
		case rec.Live:
			meta = append(meta, "open")
		}
		right := []span{{strings.Join(meta, " · ") + " ", th.dim}}
		items = append(items, pickItem{
			row:      listRow{left: left, right: right, disabled: disabled},
			key:      title + " " + h.ID + " " + h.CwdOrEmpty() + " " + fork,
			value:    h.ID,
			disabled: disabled,
		})
	}
	r.p.setItems(items)
	if r.all && !r.loadedAll {
		r.p.status = "loading…"
		return
	}
	if r.loaded && len(items) == 0 {
		if r.all {
			r.p.status = "no sessions yet"
		} else {
			r.p.status = "no sessions in this workspace · Tab shows all"
		}
	} else if r.loaded {
		r.p.status = plural(len(items), "session")
	}
}

// resolveDirect resumes the one session an id prefix given with /resume
// names, searching every workspace.
func (r *resumePicker) resolveDirect() {
	if r.direct == "" {
		return
	}
	var match []string
	for _, rec := range r.records {
		if strings.HasPrefix(rec.Header.ID, r.direct) {
			match = append(match, rec.Header.ID)
		}
	}
	switch len(match) {
	case 0:
		r.p.status = "no session id starts with " + oneLine(r.direct)
	case 1:
		r.u.resume(match[0])
	default:
		r.all = true
		r.rebuild()
	}
}
