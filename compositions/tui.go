package compositions

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/tui"
)

// TUIOptions configures RunTUI.
type TUIOptions struct {
	// Cwd is the workspace new sessions start in (absolute).
	Cwd string
	// Resume continues this session instead of starting a new one.
	Resume string
	// PickSession opens the /resume picker over the new session.
	PickSession bool
	// ResumeCommand formats the command that resumes a session; the caller
	// prints it after exit. Nil uses "dsh tui --resume ID".
	ResumeCommand func(id string) string
	// Screen is the terminal; nil opens the process's. Tests pass a
	// simulation screen.
	Screen    tcell.Screen
	AfterDraw func(tcell.Screen)
	Version   string
	// Warning is shown as soon as the UI opens.
	Warning string
	// NoColor turns colours off whatever tui.color says (NO_COLOR, a dumb
	// terminal).
	NoColor bool
}

// RunTUI runs the terminal UI over r, one session at a time, until the user
// exits or ctx is done. The session shown last is closed (flushed) before
// RunTUI returns; r stays open for the caller to Close.
func RunTUI(ctx context.Context, r *Runtime, o TUIOptions) (tui.Result, error) {
	if r.Kind != TUI {
		return tui.Result{}, errors.New("compositions: RunTUI needs a runtime of kind tui")
	}
	var tc tui.Config
	if err := r.Config.Section(tui.SectionPath).Decode(&tc); err != nil {
		return tui.Result{}, err
	}
	if o.NoColor {
		tc.Color = false
	}
	opts := tui.Options{
		Sessions:      r,
		Tools:         r.Tools,
		Models:        r.Provider,
		MCP:           r,
		Config:        tc,
		Cwd:           o.Cwd,
		PromptHistory: filepath.Join(r.Config.Home, "prompt-history.jsonl"),
		Resume:        o.Resume,
		PickSession:   o.PickSession,
		Version:       o.Version,
		Warning:       o.Warning,
		ResumeCommand: o.ResumeCommand,
		Screen:        o.Screen,
		AfterDraw:     o.AfterDraw,
		Now:           r.Now,
		NewID:         r.NewID,
		Log:           r.Log.With("component", "tui"),
	}
	// Interfaces stay nil when the service is absent, so the UI can tell.
	if r.Query != nil {
		opts.Query = r.Query
	}
	if r.Permissions != nil {
		opts.Permissions = r.Permissions
	}
	return tui.Run(ctx, opts)
}
