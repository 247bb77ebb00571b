package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// command is one human command. Commands never reach the model.
type command struct {
	name string
	args string
	help string
	run  func(u *ui, arg string)
}

// commandList is the command registry, in /help order.
func commandList() []command {
	return []command{
		{"help", "", "show commands and keys", func(u *ui, _ string) { u.showHelp() }},
		{"new", "", "start a new session in this workspace", func(u *ui, _ string) { u.newSession() }},
		{"resume", "[id]", "continue a past session (type to filter, Tab: all workspaces)", (*ui).resumeCommand},
		{"search", "<query>", "full-text search over past sessions", (*ui).searchCommand},
		{"fork", "", "continue in a new session seeded with this one", func(u *ui, _ string) { u.fork() }},
		{"compact", "", "summarize older history to free context", func(u *ui, _ string) { u.compact() }},
		{"retry", "", "run a failed turn again, without repeating your message", func(u *ui, _ string) { u.retry() }},
		{"model", "[id [effort]]", "choose the model (and reasoning effort)", (*ui).modelCommand},
		{"mode", "[name]", "choose the permission mode", (*ui).modeCommand},
		{"title", "<text>", "rename this session", (*ui).titleCommand},
		{"status", "", "show session details", func(u *ui, _ string) { u.statusCommand() }},
		{"mcp", "", "show this session's MCP servers and their tools", (*ui).mcpCommand},
		{"exit", "", "leave dsh (the session stays resumable)", func(u *ui, _ string) { u.exit() }},
	}
}

// commandsMatching returns the commands whose name starts with prefix.
func commandsMatching(prefix string) []command {
	var out []command
	for _, c := range commandList() {
		if strings.HasPrefix(c.name, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// command runs a line starting with "/".
func (u *ui) command(line string) {
	found, name, arg := parseCommand(line)
	if found == nil {
		u.notice(entryError, "unknown command /%s: /help lists the commands (start a message with // to send a literal /)", sanitize(name))
		return
	}
	found.run(u, arg)
}

// parseCommand splits a line starting with "/" into the command it names
// and its argument (the rest of the line, trimmed). The name is the text up
// to the first space; an exact name wins, else a prefix of exactly one
// command is enough, and /quit is /exit. found is nil for an unknown or
// ambiguous name, which name returns as typed.
func parseCommand(line string) (found *command, name, arg string) {
	name, arg, _ = strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	if name == "quit" {
		name = "exit"
	}
	for _, c := range commandList() {
		if c.name == name {
			return &c, name, arg
		}
	}
	if m := commandsMatching(name); len(m) == 1 && name != "" {
		return &m[0], name, arg
	}
	return nil, name, arg
}

func (u *ui) titleCommand(arg string) {
	if u.cur == nil {
		u.notice(entryError, "no session is open")
		return
	}
	title := session.NormalizeTitle(arg, 0)
	if title == "" {
		u.notice(entryError, "give the new title, e.g. /title fix the flaky upload test")
		return
	}
	data := session.SessionTitle{Title: title, MessageSeqs: []int{}, Source: json.RawMessage(`{"kind":"user"}`)}
	if _, err := u.cur.agent.Session().Append(session.TypeSessionTitle, data); err != nil {
		u.notice(entryError, "renaming failed: %v", err)
		return
	}
	if err := u.cur.agent.Session().Flush(); err != nil {
		u.notice(entryError, "renaming was not saved: %v", err)
	}
}

func (u *ui) modeCommand(arg string) {
	if u.cur == nil || u.opts.Permissions == nil {
		u.notice(entryError, "permission modes are not available in this composition")
		return
	}
	if arg == "" {
		u.modePicker()
		return
	}
	m, err := permissions.ParseMode(arg)
	if err != nil {
		u.notice(entryError, "%v", err)
		return
	}
	u.setMode(m)
}

func (u *ui) setMode(m permissions.Mode) {
	if err := u.opts.Permissions.SetMode(u.cur.agent.ID(), m); err != nil {
		u.notice(entryError, "%v", err)
		return
	}
	u.notice(entryNotice, "permission mode: %s — %s", m, m.Description())
}

func (u *ui) modelCommand(arg string) {
	if u.cur == nil {
		u.notice(entryError, "no session is open")
		return
	}
	fields := strings.Fields(arg)
	if len(fields) == 0 {
		u.modelPicker()
		return
	}
	id, effort := fields[0], ""
	if len(fields) > 1 {
		effort = fields[1]
	}
	if len(fields) > 2 {
		u.notice(entryError, "usage: /model [id [effort]]")
		return
	}
	u.setModel(id, effort)
}

func (u *ui) setModel(id, effort string) {
	if effort == "default" {
		effort = ""
	}
	known := u.opts.Models == nil
	if u.opts.Models != nil {
		if p, _, ok := strings.Cut(id, "/"); ok && p == u.opts.Models.Name() {
			id = id[len(p)+1:]
		}
		for _, m := range u.opts.Models.Models() {
			if m.ID == id {
				known = true
			}
		}
		if effort != "" {
			info := u.opts.Models.Model(id)
			if len(info.Efforts) > 0 && !contains(info.Efforts, effort) {
				u.notice(entryError, "model %s has no reasoning effort %q; use one of %s", sanitize(id), sanitize(effort), strings.Join(info.Efforts, ", "))
				return
			}
		}
	}
	u.cur.agent.SetModel(id, effort)
	msg := fmt.Sprintf("model: %s", sanitize(id))
	if effort != "" {
		msg += " · effort " + sanitize(effort)
	}
	msg += " (from the next request)"
	if !known {
		msg += "; it is not in the provider's catalog, so requests may fail"
	}
	u.notice(entryNotice, "%s", msg)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (u *ui) statusCommand() {
	if u.cur == nil {
		u.notice(entryError, "no session is open")
		return
	}
	a := u.cur.agent
	t := u.cur.t
	h := a.Session().Header()
	model, effort := a.Model()
	lines := []string{
		"session " + h.ID,
		"title   " + orDash(t.title),
		"cwd     " + h.CwdOrEmpty(),
		"model   " + model + effortSuffix(effort),
		fmt.Sprintf("events  %d · turn %d", a.Session().Len(), t.stats.turn),
		fmt.Sprintf("tokens  in %s · out %s · cache read %s", tokens(t.stats.input), tokens(t.stats.output), tokens(t.stats.cacheRead)),
	}
	if u.opts.Permissions != nil {
		lines = append(lines, "mode    "+string(u.opts.Permissions.Mode(h.ID)))
	}
	if p := h.ParentSession; p != nil {
		lines = append(lines, "parent  "+*p)
	}
	u.notice(entryNotice, "%s", strings.Join(lines, "\n"))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func effortSuffix(effort string) string {
	if effort == "" {
		return ""
	}
	return " · effort " + effort
}

// helpLines is the /help page.
func (u *ui) helpLines() []line {
	th := u.th
	var out []line
	out = append(out, line{{"dsh", th.accent}, {" " + u.opts.Version, th.dim}}, nil, line{{"Commands", th.heading}})
	cmds := commandList()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name)+len(c.args)+2)
	}
	for _, c := range cmds {
		usage := "/" + c.name
		if c.args != "" {
			usage += " " + c.args
		}
		out = append(out, line{{"  " + usage + strings.Repeat(" ", width-len(usage)+2), th.bold}, {c.help, th.base}})
	}
	keys := [][2]string{
		{"Enter", "send (steers the running turn)"},
		{"Alt+Enter, Shift+Enter, Ctrl+J", "new line"},
		{"Esc", "cancel the running turn"},
		{"Ctrl+C twice", "exit"},
		{"Up, Down", "prompt history"},
		{"PgUp, PgDn, wheel", "scroll the transcript"},
		{"Shift+Up, Shift+Down", "scroll one line"},
		{"Home, End", "top / bottom of the transcript (input empty)"},
		{"Ctrl+O", "tool cards: collapsed → expanded → hidden"},
		{"click a tool card", "expand or collapse it"},
		{"Shift+drag", "select text while the mouse is on (tui.mouse)"},
		{"Ctrl+R", "show or hide reasoning"},
		{"Ctrl+L", "redraw the screen"},
		{"Tab", "complete a command"},
	}
	out = append(out, nil, line{{"Keys", th.heading}})
	for _, k := range keys {
		out = append(out, line{{fmt.Sprintf("  %-22s", k[0]), th.bold}, {k[1], th.base}})
	}
	if u.cur != nil {
		out = append(out, nil, line{{"Resume this session later with: ", th.dim}, {u.opts.ResumeCommand(u.cur.agent.ID()), th.bold}})
	}
	out = append(out, nil, line{{"Esc closes this page.", th.dim}})
	return out
}
