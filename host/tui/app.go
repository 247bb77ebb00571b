package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Page names.
const (
	pageMain     = "main"
	pageApproval = "approval"
	pagePicker   = "picker"
	pageSearch   = "search"
	pageViewer   = "viewer"
	pageHelp     = "help"
)

// ui is one running terminal UI. Fields below the mutex-free line are
// touched only on the tview event goroutine.
type ui struct {
	opts Options
	// ws is opts.Cwd resolved once: which sessions are this workspace's.
	ws   session.Workspace
	app  *tview.Application
	th   *theme
	post *poster

	// ctx is cancelled when the UI shuts down; background work (session
	// opening, searches, the approver) watches it.
	ctx    context.Context
	cancel context.CancelFunc
	quit   chan struct{}
	quitMu sync.Once
	bg     sync.WaitGroup
	// ticking is set while a turn runs, so the ticker redraws elapsed
	// times only when they move.
	ticking atomic.Bool

	mode    viewMode
	pages   *tview.Pages
	layout  *tview.Flex
	header  *bar
	view    *transcriptView
	plan    *linesBox
	hint    *bar
	input   *tview.TextArea
	status  *bar
	overlay []string // open pages above main, innermost last
	focusOf map[string]tview.Primitive
	onClose map[string][]func()
	// mcpShown is the last MCP notice shown per session and server.
	mcpShown map[string]string

	cur     *binding
	blank   *transcript // shown while no session is open
	opening string      // what is being opened, "" when nothing

	history []string
	histPos int
	// prompts is the history file; recalled what it held for this
	// workspace when the UI started, plus every line sent since.
	prompts  *promptHistory
	recalled []string
	draft    string
	ctrlC    bool
	flash    []span // a transient hint, cleared by the next key
	inputRow int

	approvals []*approvalReq
	dialog    *approvalDialog
}

// Run opens the initial session (Options.Resume, else a new one in
// Options.Cwd), takes over the terminal and drives the UI until the user
// exits or ctx is done. The terminal is restored before Run returns; the
// caller prints Result.ResumeCommand. A failure to open the initial session
// is returned before the terminal is touched.
func Run(ctx context.Context, opts Options) (Result, error) {
	return runUI(ctx, opts, nil)
}

// runUI is Run with a hook that sees the UI before its event loop starts;
// tests use it to reach the application (to deliver a resize).
func runUI(ctx context.Context, opts Options, ready func(*ui)) (Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	var first *agent.Agent
	if opts.Resume != "" {
		first, err = opts.Sessions.ResumeSession(ctx, opts.Resume)
	} else {
		first, err = opts.Sessions.NewSession(ctx, opts.Cwd)
	}
	if err != nil {
		return Result{}, err
	}
	u := newUI(opts)
	defer u.cancel()
	if u.recalled, err = u.prompts.recall(u.ws); err != nil {
		opts.Log.Warn("the prompt history could not be read", "file", opts.PromptHistory, "err", err)
	}
	u.attach(first)
	defer u.watchMCP()()
	if opts.Warning != "" {
		u.notice(entryError, "%s", opts.Warning)
	}
	if opts.PickSession {
		u.resumeCommand("")
	}
	if ready != nil {
		ready(u)
	}
	runErr := u.run(ctx)
	res := Result{}
	var closeErr error
	if u.cur != nil {
		res.SessionID = u.cur.agent.ID()
		// An untouched session has nothing worth resuming.
		if u.cur.agent.Session().Len() > 0 {
			res.ResumeCommand = opts.ResumeCommand(res.SessionID)
		}
		u.cur.detach()
		closeErr = opts.Sessions.CloseSession(u.cur.agent)
	}
	u.bg.Wait()
	return res, errors.Join(runErr, closeErr)
}

func newUI(opts Options) *ui {
	u := &ui{
		opts:    opts,
		app:     tview.NewApplication(),
		th:      newTheme(opts.Config.Color),
		post:    newPoster(),
		quit:    make(chan struct{}),
		focusOf: map[string]tview.Primitive{},
		prompts: &promptHistory{path: opts.PromptHistory},
		onClose: map[string][]func(){},
		mode:    viewMode{showReasoning: opts.Config.ShowReasoning, maxToolLines: opts.Config.MaxToolOutputLines},
	}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	// withDefaults refused an empty Cwd, the only input that fails.
	u.ws, _ = session.ResolveWorkspace(opts.Cwd)
	u.blank = newTranscript(emptyHeader(opts.Cwd), nil)
	u.build()
	return u
}

// build composes the main page: header, transcript, plan, hint, input and
// status, top to bottom.
func (u *ui) build() {
	th := u.th
	u.header = newBar(th.bar, th.escape, u.headerContent)
	u.view = newTranscriptView(u.blank, th, &u.mode)
	u.view.empty = u.welcome()
	u.plan = newLinesBox(th, u.planLines)
	u.hint = newBar(th.base, th.escape, u.hintContent)
	u.hint.gap = &span{"─", th.dim}
	u.status = newBar(th.bar, th.escape, u.statusContent)
	u.input = tview.NewTextArea().
		SetPlaceholder("Message dsh · Enter sends · Alt+Enter new line · /help").
		SetPlaceholderStyle(th.dim).
		SetTextStyle(th.base)
	u.input.SetBorder(false)
	u.input.SetChangedFunc(u.inputChanged)
	u.layout = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(u.header, 1, 0, false).
		AddItem(u.view, 0, 1, false).
		AddItem(u.plan, 0, 0, false).
		AddItem(u.hint, 1, 0, false).
		AddItem(u.input, 1, 0, true).
		AddItem(u.status, 1, 0, false)
	u.inputRow = 1
	u.pages = tview.NewPages().AddPage(pageMain, u.layout, true, true)
	u.app.SetRoot(u.pages, true).SetFocus(u.input)
	u.app.SetInputCapture(u.capture)
	u.app.EnableMouse(u.opts.Config.Mouse)
	u.app.EnablePaste(true)
	u.app.SetTitle("dsh")
	u.app.SetBeforeDrawFunc(func(tcell.Screen) bool {
		u.layout.ResizeItem(u.plan, u.planRows(), 0)
		u.fitInput()
		u.ticking.Store(u.cur != nil && (u.cur.running || u.cur.t.stats.phase != phaseIdle))
		return false
	})
	if u.opts.AfterDraw != nil {
		u.app.SetAfterDrawFunc(u.opts.AfterDraw)
	}
}

func (u *ui) welcome() []line {
	th := u.th
	return []line{
		{{"dsh", th.accent}, {" · a coding agent in " + sanitize(u.opts.Cwd), th.dim}},
		nil,
		{{"Type a message and press Enter. /help lists commands and keys.", th.dim}},
	}
}

// run drives the application until exit. The pump and the ticker stop
// before the application does, so no goroutine is left waiting on it.
func (u *ui) run(ctx context.Context) error {
	if u.opts.Screen != nil {
		u.app.SetScreen(u.opts.Screen)
	}
	restore := u.opts.Tools.SetApprover(u)
	defer restore()
	defer u.opts.Tools.Execute.Use(u.executing)()
	pumpCtx, stopPump := context.WithCancel(context.Background())
	go u.post.run(pumpCtx, func(f func()) { u.app.QueueUpdateDraw(f) })
	tickDone := make(chan struct{})
	go u.tick(pumpCtx, tickDone)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-u.quit:
		case <-ctx.Done():
		}
		u.cancel()
		stopPump()
		<-u.post.done
		<-tickDone
		u.app.Stop()
	}()
	err := u.app.Run()
	u.exit()
	<-stopped
	return err
}

// tick redraws once a second while a turn runs, so elapsed times move.
func (u *ui) tick(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if u.ticking.Load() {
				u.post.post(func() {})
			}
		}
	}
}

// exit asks the UI to shut down; it never blocks.
func (u *ui) exit() { u.quitMu.Do(func() { close(u.quit) }) }

// goBackground runs f off the UI goroutine; Run waits for it before
// returning.
func (u *ui) goBackground(f func(ctx context.Context)) {
	u.bg.Add(1)
	go func() {
		defer u.bg.Done()
		f(u.ctx)
	}()
}

// pageCtx runs load in the background with a context that ends when the
// page closes (or the UI does), so a closed picker stops loading and a
// result posted for a closed page can tell (ctx.Err() != nil).
func (u *ui) pageCtx(name string, load func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(u.ctx)
	u.onClose[name] = append(u.onClose[name], cancel)
	u.goBackground(func(context.Context) { load(ctx) })
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// transcript returns what the main view shows.
func (u *ui) transcript() *transcript {
	if u.cur == nil {
		return u.blank
	}
	return u.cur.t
}

// notice adds a local remark to the current transcript and follows it.
func (u *ui) notice(kind entryKind, format string, args ...any) {
	u.transcript().notice(kind, fmt.Sprintf(format, args...))
	u.view.toBottom()
}

// setFlash shows a transient hint until the next key.
func (u *ui) setFlash(spans ...span) { u.flash = spans }

// openPage shows a page above the main one and focuses p.
func (u *ui) openPage(name string, p tview.Primitive, focus tview.Primitive) {
	u.closePage(name)
	u.pages.AddPage(name, p, true, true)
	u.overlay = append(u.overlay, name)
	u.focusOf[name] = focus
	u.app.SetFocus(focus)
}

// closePage removes a page and gives focus back to the page below it.
func (u *ui) closePage(name string) {
	if !u.pages.HasPage(name) {
		return
	}
	u.pages.RemovePage(name)
	delete(u.focusOf, name)
	for _, f := range u.onClose[name] {
		f()
	}
	delete(u.onClose, name)
	for i, n := range u.overlay {
		if n == name {
			u.overlay = append(u.overlay[:i:i], u.overlay[i+1:]...)
			break
		}
	}
	u.refocus()
}

// refocus focuses the innermost open page's primary widget.
func (u *ui) refocus() {
	top := u.topPage()
	if top == "" {
		u.app.SetFocus(u.input)
		return
	}
	u.app.SetFocus(u.focusOf[top])
}

// closeAllPages returns to the main page, except for a pending approval,
// which must be answered.
func (u *ui) closeAllPages() {
	for _, name := range append([]string(nil), u.overlay...) {
		if name != pageApproval {
			u.closePage(name)
		}
	}
}

// topPage is the innermost open overlay, or "" for the main page.
func (u *ui) topPage() string {
	if len(u.overlay) == 0 {
		return ""
	}
	return u.overlay[len(u.overlay)-1]
}

// shortPath shows a path relative to the user's home as ~/...
func shortPath(p, home string) string {
	if home != "" && strings.HasPrefix(p, home+"/") {
		return "~" + p[len(home):]
	}
	return p
}
