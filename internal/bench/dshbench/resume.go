package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The /resume row drives the built binary's terminal UI as a user does:
// `dsh tui` in the benchmark's workspace, in a real terminal (a tmux pane),
// a new process each run. Once the UI is ready and "/resume" is typed, it
// times the Enter keystroke to the first screen that shows the picker's
// titles. The pane is read through one tmux control-mode client, which
// answers a capture-pane in well under a millisecond, so the figure's
// resolution is the polling interval (pickerPoll), not a process spawn.

// resumeTitle is the title of the benchmark workspace's sessions; the
// picker's rows show it once the catalog was read.
const resumeTitle = "benchmark workspace session"

// pickerPoll is how often the pane is read while waiting for the titles.
const pickerPoll = time.Millisecond

// resumeResult is the /resume row.
type resumeResult struct {
	// Missing says why the row was not measured ("" when it was).
	Missing string `json:"missing"`
	// Picker is the Enter of "/resume" to the titles on screen.
	Picker latency `json:"picker"`
	// Ready is the spawn of `dsh tui` to its ready prompt, for context.
	Ready latency `json:"ready"`
	// Status is the picker's count line, as shown ("47 sessions").
	Status string `json:"status"`
}

// Issue 15's target.
const targetResumePicker = 100 * time.Millisecond

// measureResume runs `dsh tui` runs+1 times (the first warms the cache)
// and times its /resume picker each time.
func measureResume(ctx context.Context, bin string, l layout, ws string, runs int) (resumeResult, error) {
	var res resumeResult
	if _, err := exec.LookPath("tmux"); err != nil {
		res.Missing = "tmux is not installed"
		return res, nil
	}
	dir, err := os.MkdirTemp("", "dshbench-tui-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "run.sh")
	// The pane stays after dsh exits, so its last words can be read.
	body := "#!/bin/sh\ncd " + shellQuote(ws) + "\n" +
		"HOME=" + shellQuote(dir) + " TERM=screen-256color PATH=" + shellQuote(os.Getenv("PATH")) +
		" " + shellQuote(bin) + " --home " + shellQuote(l.home) + " tui\n" +
		"echo \"[dsh exited with code $?]\"\nexec sleep 600\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		return res, err
	}
	// The server's socket lives in dir too, so nothing is left behind.
	t, err := startTmux(ctx, filepath.Join(dir, "tmux.sock"))
	if err != nil {
		return res, err
	}
	defer t.close()
	var picker, ready []time.Duration
	for i := range runs + 1 {
		r, p, status, err := t.resumeOnce(ctx, script, i)
		if err != nil {
			// Let a dsh that still runs discard its session.
			_ = t.exit(ctx, t.session+":"+runWindow(i))
			return res, err
		}
		if i > 0 {
			picker, ready = append(picker, p), append(ready, r)
		}
		res.Status = status
	}
	res.Picker, res.Ready = percentiles(picker), percentiles(ready)
	return res, nil
}

// resumeOnce starts dsh in a new window, opens the picker and exits dsh.
func (t *tmuxControl) resumeOnce(ctx context.Context, script string, run int) (ready, picker time.Duration, status string, err error) {
	win := runWindow(run)
	target := t.session + ":" + win
	start := time.Now()
	if _, err := t.command(ctx, "new-window -d -n "+win+" -t "+t.session+" "+shellQuote(script)); err != nil {
		return 0, 0, "", err
	}
	if _, _, err := t.waitFor(ctx, target, 0, "○ ready"); err != nil {
		return 0, 0, "", err
	}
	ready = time.Since(start)
	if _, err := t.command(ctx, "send-keys -t "+target+" -l /resume"); err != nil {
		return 0, 0, "", err
	}
	if _, _, err := t.waitFor(ctx, target, 0, "── /resume"); err != nil {
		return 0, 0, "", err
	}
	pressed := time.Now()
	if _, err := t.command(ctx, "send-keys -t "+target+" Enter"); err != nil {
		return 0, 0, "", err
	}
	screen, shown, err := t.waitFor(ctx, target, pickerPoll, resumeTitle, " sessions")
	if err != nil {
		return 0, 0, "", err
	}
	picker = shown.Sub(pressed)
	for _, line := range strings.Split(screen, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[len(f)-1] == "sessions" {
			status = f[len(f)-2] + " sessions"
		}
	}
	// Close the picker and exit.
	if _, err := t.command(ctx, "send-keys -t "+target+" Escape"); err != nil {
		return 0, 0, "", err
	}
	if _, _, err := t.waitGone(ctx, target, "Resume a session"); err != nil {
		return 0, 0, "", err
	}
	if err := t.exit(ctx, target); err != nil {
		return 0, 0, "", err
	}
	_, err = t.command(ctx, "kill-window -t "+target)
	return ready, picker, status, err
}

// exit ends the dsh of target with Ctrl+C twice, which discards the empty
// session the UI started, so the workspace does not grow run by run (a
// killed dsh would leave it behind). One key at a time: two keys in a row
// can reach dsh as one (Escape then Ctrl+C is Alt+Ctrl+C).
func (t *tmuxControl) exit(ctx context.Context, target string) error {
	if _, err := t.command(ctx, "send-keys -t "+target+" C-c"); err != nil {
		return err
	}
	if _, _, err := t.waitFor(ctx, target, pickerPoll, "Press Ctrl+C again"); err != nil {
		return err
	}
	if _, err := t.command(ctx, "send-keys -t "+target+" C-c"); err != nil {
		return err
	}
	_, _, err := t.waitFor(ctx, target, pickerPoll, "[dsh exited with code 0]")
	return err
}

func runWindow(run int) string { return fmt.Sprintf("run%d", run) }

// tmuxControl is a private tmux server and one control-mode client of it:
// commands are written to the client's stdin, and each answer is the
// lines between its %begin and %end (or %error).
type tmuxControl struct {
	socket, session string
	cmd             *exec.Cmd
	in              io.WriteCloser
	// blocks receives each command's answer; the reader goroutine, which
	// ends when the client's stdout does, owns it and closes it.
	blocks chan tmuxBlock
}

type tmuxBlock struct {
	lines []string
	err   bool
}

// startTmux starts the server with a 120×40 session (its first window
// runs an idle shell: the runs get windows of their own) and attaches the
// control client at that size.
func startTmux(ctx context.Context, socket string) (*tmuxControl, error) {
	t := &tmuxControl{socket: socket, session: "bench", blocks: make(chan tmuxBlock)}
	if out, err := exec.CommandContext(ctx, "tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", t.session, "-x", "120", "-y", "40", "exec sleep 3600").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux new-session: %w: %s", err, out)
	}
	t.cmd = exec.CommandContext(ctx, "tmux", "-S", socket, "-C", "attach", "-t", t.session)
	var err error
	if t.in, err = t.cmd.StdinPipe(); err != nil {
		t.killServer()
		return nil, err
	}
	out, err := t.cmd.StdoutPipe()
	if err != nil {
		t.killServer()
		return nil, err
	}
	t.cmd.Stderr = os.Stderr
	if err := t.cmd.Start(); err != nil {
		t.killServer()
		return nil, err
	}
	go t.read(out)
	if err := t.synced(); err != nil {
		t.close()
		return nil, err
	}
	for _, c := range []string{"refresh-client -C 120x40", "refresh-client -f no-output", "set-option -g remain-on-exit off"} {
		if _, err := t.command(ctx, c); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// synced waits until the control client is attached to the session.
// The attach itself is answered with a block, which a marker tells apart;
// and the commands written to the client may run before the attach is
// done, while the client has no session (refresh-client then fails with
// "no current client"), so the marker also asks for the client's session
// until it names ours.
func (t *tmuxControl) synced() error {
	const marker = "dshbench-synced "
	ask := func() error {
		_, err := io.WriteString(t.in, "display-message -p '"+marker+"#{client_session}'\n")
		return err
	}
	if err := ask(); err != nil {
		return err
	}
	for tries := 1; ; tries++ {
		b, ok := <-t.blocks
		for ok && !b.err && !(len(b.lines) == 1 && strings.HasPrefix(b.lines[0], marker)) {
			b, ok = <-t.blocks // the attach's own answer
		}
		switch {
		case !ok:
			return errors.New("tmux control client exited")
		case !b.err && strings.TrimPrefix(b.lines[0], marker) == t.session:
			return nil
		case tries == 1000:
			return errors.New("the tmux control client never attached to its session")
		}
		// Asked too early (an error, or no session yet): ask again.
		if err := ask(); err != nil {
			return err
		}
	}
}

// read splits the client's output into answers; notifications (lines
// starting with % outside a block) are dropped.
func (t *tmuxControl) read(r io.Reader) {
	defer close(t.blocks)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var cur *tmuxBlock
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "%begin "):
			cur = &tmuxBlock{}
		case cur != nil && (strings.HasPrefix(line, "%end ") || strings.HasPrefix(line, "%error ")):
			cur.err = strings.HasPrefix(line, "%error ")
			t.blocks <- *cur
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
}

// command runs one tmux command and returns its output lines.
func (t *tmuxControl) command(ctx context.Context, c string) ([]string, error) {
	if _, err := io.WriteString(t.in, c+"\n"); err != nil {
		return nil, fmt.Errorf("tmux %s: %w", c, err)
	}
	select {
	case b, ok := <-t.blocks:
		if !ok {
			return nil, fmt.Errorf("tmux %s: the control client exited", c)
		}
		if b.err {
			return nil, fmt.Errorf("tmux %s: %s", c, strings.Join(b.lines, "; "))
		}
		return b.lines, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// paneDeadline ends a run whose screen never shows what it waits for.
const paneDeadline = time.Minute

// waitFor reads target's screen until it shows every text, every poll
// (0: as fast as answers come), and returns that screen and the time the
// capture that showed it was asked for.
func (t *tmuxControl) waitFor(ctx context.Context, target string, poll time.Duration, texts ...string) (string, time.Time, error) {
	return t.wait(ctx, target, poll, func(screen string) bool {
		for _, s := range texts {
			if !strings.Contains(screen, s) {
				return false
			}
		}
		return true
	}, fmt.Sprintf("%q", texts))
}

// waitGone reads target's screen until it no longer shows text.
func (t *tmuxControl) waitGone(ctx context.Context, target, text string) (string, time.Time, error) {
	return t.wait(ctx, target, pickerPoll, func(screen string) bool { return !strings.Contains(screen, text) }, "no "+text)
}

func (t *tmuxControl) wait(ctx context.Context, target string, poll time.Duration, done func(string) bool, what string) (string, time.Time, error) {
	deadline := time.Now().Add(paneDeadline)
	for {
		asked := time.Now()
		lines, err := t.command(ctx, "capture-pane -p -t "+target)
		if err != nil {
			return "", asked, err
		}
		screen := strings.Join(lines, "\n")
		if done(screen) {
			return screen, asked, nil
		}
		if asked.After(deadline) {
			return "", asked, fmt.Errorf("dsh tui never showed %s; the pane shows:\n%s", what, screen)
		}
		if poll > 0 {
			time.Sleep(poll)
		}
	}
}

func (t *tmuxControl) killServer() {
	_ = exec.Command("tmux", "-S", t.socket, "kill-server").Run()
}

// close ends the control client and the server (and with it every pane).
func (t *tmuxControl) close() {
	t.killServer()
	if t.in != nil {
		_ = t.in.Close()
	}
	if t.cmd != nil && t.cmd.Process != nil {
		_ = t.cmd.Wait()
	}
}

// shellQuote quotes s for sh and for tmux's command parser alike.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (r resumeResult) row(row func(...string)) {
	if r.Missing != "" {
		row("TUI /resume keystroke → titles on screen", "not measured", r.Missing, "", "")
		return
	}
	row(fmt.Sprintf("TUI /resume keystroke → titles on screen (%s)", r.Status), pp(r.Picker), "dsh tui spawn → ready "+pp(r.Ready), "", "")
}

func (r resumeResult) target(row func(...string), verdict func(bool) string) {
	if r.Missing != "" {
		row("TUI /resume picker shows titles ≤ 100 ms after the keystroke", "not measured", r.Missing, "n/a", "")
		return
	}
	row("TUI /resume picker shows titles ≤ 100 ms after the keystroke", ms(r.Picker.P50), "", verdict(r.Picker.P50 <= targetResumePicker), "")
}
