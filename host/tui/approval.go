package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// rejectedAnswer is what Esc and a closing UI answer.
const rejectedAnswer = tools.Rejected

// approvalReq is one pending "ask" from the permissions policy.
type approvalReq struct {
	call   *tools.Call
	reason string
	view   *tools.CallView
	answer chan string // buffered: the dialog never blocks on it
}

// Approve implements tools.Approver: it queues a dialog on the UI and waits
// for the user's answer, the call's cancellation, or the UI closing.
// Concurrent asks (parallel tool calls) are shown one at a time.
func (u *ui) Approve(ctx context.Context, call *tools.Call, reason string) (string, error) {
	req := &approvalReq{call: call, reason: reason, answer: make(chan string, 1)}
	if def, ok := u.opts.Tools.For(call); ok && def.PresentCall != nil {
		req.view = safePresent(def.PresentCall, call)
	}
	u.post.post(func() { u.enqueueApproval(req) })
	select {
	case a := <-req.answer:
		return a, nil
	case <-ctx.Done():
		u.post.post(func() { u.dropApproval(req) })
		return tools.Cancelled, context.Cause(ctx)
	case <-u.ctx.Done():
		return tools.Rejected, errors.New("the terminal UI closed before the user answered")
	}
}

func (u *ui) enqueueApproval(req *approvalReq) {
	u.markAsking(req, true)
	u.approvals = append(u.approvals, req)
	if len(u.approvals) == 1 {
		u.showApproval()
	}
}

// dropApproval removes an ask whose call was cancelled.
func (u *ui) dropApproval(req *approvalReq) {
	for i, r := range u.approvals {
		if r != req {
			continue
		}
		u.approvals = append(u.approvals[:i:i], u.approvals[i+1:]...)
		u.markAsking(req, false)
		if i == 0 {
			u.closeDialog()
			u.showApproval()
		}
		return
	}
}

// answerApproval answers the front ask and shows the next one.
func (u *ui) answerApproval(outcome string) {
	if len(u.approvals) == 0 {
		return
	}
	req := u.approvals[0]
	u.approvals = u.approvals[1:]
	u.markAsking(req, false)
	req.answer <- outcome
	u.closeDialog()
	u.showApproval()
}

// markAsking shows on the call's card and in the status line that it waits
// for the user, so that wait is not counted as the tool running.
func (u *ui) markAsking(req *approvalReq, on bool) {
	if t := u.transcriptOf(sessionOf(req.call)); t != nil {
		t.asking(req.call.CallID, on, u.opts.Now().UnixMilli())
	}
}

func (u *ui) closeDialog() {
	u.dialog = nil
	u.closePage(pageApproval)
}

func (u *ui) showApproval() {
	if len(u.approvals) == 0 {
		return
	}
	d := newApprovalDialog(u, u.approvals[0], len(u.approvals)-1)
	u.dialog = d
	u.openPage(pageApproval, &centred{Box: tview.NewBox(), d: d}, d)
}

// centred lays the approval dialog out at every draw, centred and sized
// for the screen it is drawn on, so a terminal resized while the dialog is
// open (80 columns to 50) gets a dialog that fits, Reject included.
type centred struct {
	*tview.Box
	d *approvalDialog
}

// Draw implements tview.Primitive.
func (c *centred) Draw(screen tcell.Screen) {
	x, y, w, h := c.GetRect()
	width := min(max(w-8, 40), 110, w)
	height := min(max(h-6, 10), c.d.height(width-4), h)
	c.d.SetRect(x+(w-width)/2, y+(h-height)/2, width, height)
	c.d.Draw(screen)
}

func (c *centred) Focus(delegate func(p tview.Primitive)) { delegate(c.d) }
func (c *centred) HasFocus() bool                         { return c.d.HasFocus() }

func (c *centred) InputHandler() func(*tcell.EventKey, func(tview.Primitive)) {
	return c.d.InputHandler()
}

func (c *centred) MouseHandler() func(tview.MouseAction, *tcell.EventMouse, func(tview.Primitive)) (bool, tview.Primitive) {
	return c.d.MouseHandler()
}

// approvalDialog asks allow once / allow for this session / reject.
type approvalDialog struct {
	*tview.Box
	u        *ui
	req      *approvalReq
	waiting  int
	choice   int
	body     []line
	scroll   int
	bodyW    int
	bodyRows int
}

// approvalChoices are the answers, each with a label per width: the
// dialog uses the longest labels that fit on one row, so Reject is never
// cut off.
var approvalChoices = []struct {
	labels  [3]string
	outcome string
	key     rune
}{
	{[3]string{"Allow once", "Once", "once"}, tools.AllowedOnce, 'y'},
	{[3]string{"Allow for this session", "This session", "session"}, tools.AllowedAlways, 'a'},
	{[3]string{"Reject", "Reject", "reject"}, tools.Rejected, 'n'},
}

// buttonRow lays the choices out in the widest form that fits width.
func (d *approvalDialog) buttonRow(width int) line {
	th := d.u.th
	var row line
	for form := range 3 {
		row = nil
		for i, c := range approvalChoices {
			st := th.button
			if i == d.choice {
				st = th.buttonOn
			}
			text := fmt.Sprintf(" %s (%c) ", c.labels[form], c.key)
			if form == 2 {
				text = fmt.Sprintf(" %c %s ", c.key, c.labels[form])
			}
			row = append(row, span{text, st}, span{" ", th.base})
		}
		if cellsWidth(cellsOf(row, th.escape)) <= width+1 {
			break
		}
	}
	return row
}

// sessionScope says what "Allow for this session" allows: the grant is
// per tool, so it covers every later call of this tool, and no other. A
// command names no paths, so for it protected paths cannot ask again.
func (d *approvalDialog) sessionScope() string {
	if d.req.call.Sandbox != nil {
		// The call already ran sandboxed: the ask is to run it outside.
		return fmt.Sprintf("This session (a) lets every later %s command the sandbox stops run outside it without asking, until the session closes.", d.req.call.Name)
	}
	if d.req.view != nil && d.req.view.Kind == tools.KindExecute {
		return fmt.Sprintf("This session (a) allows every later %s command until the session closes, whatever it changes (.dsh and .git included); not other tools.", d.req.call.Name)
	}
	return fmt.Sprintf("This session (a) allows every later %s call until the session closes, not other tools; protected paths still ask.", d.req.call.Name)
}

func newApprovalDialog(u *ui, req *approvalReq, waiting int) *approvalDialog {
	d := &approvalDialog{Box: tview.NewBox(), u: u, req: req, waiting: waiting}
	d.SetBorder(true).SetTitle(" Approval needed ").SetTitleAlign(tview.AlignLeft)
	d.SetBorderPadding(0, 0, 1, 1)
	d.SetBorderStyle(u.th.warn)
	return d
}

// content is the dialog's text: what the call does, why it asks, and its
// preview (the command, the diff, or the raw input).
func (d *approvalDialog) content(width int) []line {
	th := d.u.th
	call, view := d.req.call, d.req.view
	title := call.Name
	if view != nil && view.Title != "" {
		title = view.Title
	}
	var paras []para
	paras = append(paras, para{spans: []span{{title, th.bold}, {"  " + call.Name, th.dim}}})
	paras = append(paras, plainParas(d.req.reason, th.warn, nil, nil)...)
	paras = append(paras, plainParas(d.sessionScope(), th.dim, nil, nil)...)
	paras = append(paras, para{})
	card := &toolCard{name: call.Name, args: call.Arguments, view: view, viewLive: true, resolved: true, status: cardRunning}
	body := card.body()
	if len(body) == 0 {
		body = rawInputLines(call, view)
	}
	out := layoutParas(paras, width, th)
	for _, b := range body {
		st := th.base
		switch b.kind {
		case '-':
			st = th.removed
		case '+':
			st = th.added
		case '@':
			st = th.hunk
		case '$':
			st = th.bold
		}
		for _, r := range wrapCells(cellsOf([]span{{b.text, st}}, th.escape), width, nil, nil, true) {
			out = append(out, lineOf(r))
		}
	}
	return out
}

// rawInputLines shows a call's input as indented JSON.
func rawInputLines(call *tools.Call, view *tools.CallView) []bodyLine {
	var v any = json.RawMessage(call.Args)
	if view != nil && view.RawInput != nil {
		v = view.RawInput
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b = []byte(call.Arguments)
	}
	var out []bodyLine
	for _, l := range splitLines(string(b)) {
		out = append(out, bodyLine{l, ' '})
	}
	return out
}

// height is how many rows the dialog wants at width (inner width).
func (d *approvalDialog) height(width int) int {
	return len(d.content(width)) + 5
}

// Draw implements tview.Primitive.
func (d *approvalDialog) Draw(screen tcell.Screen) {
	d.Box.DrawForSubclass(screen, d)
	x, y, w, h := d.GetInnerRect()
	if w <= 0 || h <= 0 {
		return
	}
	th := d.u.th
	if d.bodyW != w || d.body == nil {
		d.body, d.bodyW = d.content(w), w
	}
	rows := max(h-3, 1)
	d.bodyRows = rows
	d.scroll = min(max(d.scroll, 0), max(len(d.body)-rows, 0))
	for i := 0; i < rows && d.scroll+i < len(d.body); i++ {
		drawLine(screen, x, y+i, w, d.body[d.scroll+i])
	}
	if len(d.body) > rows {
		more := fmt.Sprintf(" %d/%d · PgUp/PgDn ", min(d.scroll+rows, len(d.body)), len(d.body))
		drawLine(screen, x+w-len(more), y+rows-1, len(more), line{{more, th.dim.Reverse(true)}})
	}
	drawLine(screen, x, y+h-2, w, d.buttonRow(w))
	help := "←/→ choose · Enter confirms · Esc rejects"
	if d.waiting > 0 {
		help += fmt.Sprintf(" · %d more waiting", d.waiting)
	}
	drawLine(screen, x, y+h-1, w, line{{help, th.dim}})
}

// InputHandler implements tview.Primitive.
func (d *approvalDialog) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return d.WrapInputHandler(func(ev *tcell.EventKey, _ func(p tview.Primitive)) {
		switch ev.Key() {
		case tcell.KeyLeft, tcell.KeyBacktab:
			d.choice = (d.choice + len(approvalChoices) - 1) % len(approvalChoices)
		case tcell.KeyRight, tcell.KeyTab:
			d.choice = (d.choice + 1) % len(approvalChoices)
		case tcell.KeyEnter:
			d.u.answerApproval(approvalChoices[d.choice].outcome)
		case tcell.KeyEscape:
			d.u.answerApproval(tools.Rejected)
		case tcell.KeyPgUp, tcell.KeyUp:
			d.scroll -= max(d.bodyRows-1, 1)
		case tcell.KeyPgDn, tcell.KeyDown:
			d.scroll += max(d.bodyRows-1, 1)
		case tcell.KeyRune:
			r := ev.Rune()
			for _, c := range approvalChoices {
				if strings.EqualFold(string(r), string(c.key)) {
					d.u.answerApproval(c.outcome)
					return
				}
			}
		}
	})
}

// MouseHandler implements tview.Primitive: a click on a button answers.
func (d *approvalDialog) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return d.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		x, y := event.Position()
		if !d.InRect(x, y) {
			return false, nil
		}
		if action != tview.MouseLeftClick {
			return true, nil
		}
		ix, iy, w, h := d.GetInnerRect()
		if y != iy+h-2 {
			return true, nil
		}
		col := ix
		row := d.buttonRow(w)
		for i, c := range approvalChoices {
			bw := cellsWidth(cellsOf(row[2*i:2*i+1], d.u.th.escape))
			if x >= col && x < col+bw {
				d.u.answerApproval(c.outcome)
				return true, nil
			}
			col += bw + 1
		}
		return true, nil
	})
}
