package permissions

import "fmt"

// Mode is a permission mode.
type Mode string

// The permission modes, from most to least permissive.
const (
	ModeBypass      Mode = "bypass"
	ModeAuto        Mode = "auto"
	ModeAcceptEdits Mode = "accept-edits"
	ModeDefault     Mode = "default"
	ModeReadOnly    Mode = "read-only"
)

// Modes returns every mode in the order front ends list them.
func Modes() []Mode {
	return []Mode{ModeDefault, ModeAcceptEdits, ModeAuto, ModeReadOnly, ModeBypass}
}

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q: use one of default, accept-edits, auto, read-only, bypass", s)
}

// Title is the mode's short display name.
func (m Mode) Title() string {
	switch m {
	case ModeAcceptEdits:
		return "Accept edits"
	case ModeAuto:
		return "Auto (sandboxed commands)"
	case ModeReadOnly:
		return "Read only"
	case ModeBypass:
		return "Bypass permissions"
	default:
		return "Default"
	}
}

// Description says in one sentence what the mode allows, for mode pickers.
func (m Mode) Description() string {
	switch m {
	case ModeAcceptEdits:
		return "File edits inside the workspace run without asking; commands and anything outside the workspace ask first."
	case ModeAuto:
		return "File edits inside the workspace and commands in a sandbox (writes only in the workspace, no network) run without asking; running a command outside the sandbox asks first."
	case ModeReadOnly:
		return "Only reading and searching; file changes and commands are refused."
	case ModeBypass:
		return "Every tool call runs without asking."
	default:
		return "Reading and searching run; file changes, commands and anything outside the workspace ask first."
	}
}

// contextText is the runtime-context sentence telling the model the mode.
func (m Mode) contextText() string {
	switch m {
	case ModeAcceptEdits:
		return "Permission mode: accept-edits. Reads, searches and file changes inside the workspace run without approval; bash commands and anything outside the workspace need the user's approval, and a rejected call must not be retried without asking the user."
	case ModeAuto:
		return "Permission mode: auto. Reads, searches and file changes inside the workspace run without approval, and bash commands run without approval inside a sandbox: they may write only in the workspace (not its .git or .dsh, and no new entries directly in a workspace root that has them: create such files with the write tool or in a subfolder) and in $TMPDIR, cannot read dsh's own data or secret paths, and have no network unless the user enabled it. When the sandbox blocks a command, the user is asked whether it may run outside the sandbox; do not work around the sandbox. Anything outside the workspace needs the user's approval."
	case ModeReadOnly:
		return "Permission mode: read-only. Only reading and searching are allowed; write, edit and bash calls are refused, so describe the changes you would make, or ask the user to switch modes."
	case ModeBypass:
		return "Permission mode: bypass. Every tool call runs without approval; take extra care with destructive commands."
	default:
		return "Permission mode: default. Reads and searches inside the workspace run without approval; file changes, bash commands and anything outside the workspace need the user's approval, and a rejected call must not be retried without asking the user."
	}
}
