package tui

import (
	"context"
	"fmt"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// openViewer shows a past session read-only, scrolled to the event at seq
// with that entry highlighted. r resumes it, Esc goes back.
func (u *ui) openViewer(id string, seq int) {
	th := u.th
	t := newTranscript(emptyHeader(u.opts.Cwd), u.present)
	view := newTranscriptView(t, th, &u.mode)
	view.empty = []line{{{" loading session " + shortID(id) + "…", th.dim}}}
	status := ""
	title := newBar(th.bar, th.escape, func(int) ([]span, []span) {
		name := t.title
		if name == "" {
			name = shortID(id)
		}
		return []span{{" Viewing ", th.bar.Bold(true)}, {oneLine(name), th.bar}, {" · read-only", th.barDim}}, []span{{status + " ", th.barDim}}
	})
	footer := newBar(th.bar, th.escape, func(int) ([]span, []span) {
		return []span{{" PgUp/PgDn/↑/↓ scroll · r resume this session · Ctrl+O cards · Esc back", th.barDim}}, nil
	})
	view.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyUp:
			view.scroll(-1)
		case tcell.KeyDown:
			view.scroll(1)
		case tcell.KeyPgUp:
			view.page(-1)
		case tcell.KeyPgDn:
			view.page(1)
		case tcell.KeyHome:
			view.toTop()
		case tcell.KeyEnd:
			view.toBottom()
		case tcell.KeyCtrlO:
			u.mode.cards = (u.mode.cards + 1) % 3
		case tcell.KeyCtrlR:
			u.mode.showReasoning = !u.mode.showReasoning
		case tcell.KeyEscape:
			u.closePage(pageViewer)
		case tcell.KeyRune:
			switch ev.Rune() {
			case 'r':
				u.resume(id)
			case 'q':
				u.closePage(pageViewer)
			case ' ':
				view.page(1)
			}
		}
		return nil
	})
	root := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(title, 1, 0, false).
		AddItem(view, 0, 1, true).
		AddItem(footer, 1, 0, false)
	u.openPage(pageViewer, root, view)
	u.pageCtx(pageViewer, func(ctx context.Context) {
		snap, err := u.opts.Query.ReadSession(ctx, id)
		u.post.post(func() {
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				view.empty = []line{{{" cannot show session " + shortID(id) + ": " + oneLine(err.Error()), th.fail}}}
				return
			}
			loaded := newTranscript(snap.Session, u.present)
			loaded.load(snap.Events)
			*t = *loaded
			view.setTranscript(t)
			view.show(t.entryAt(seq))
			status = fmt.Sprintf("event #%d", seq)
		})
	})
}
