package permissions

import "fmt"

// Mode is a permission mode.
type Mode string

// The permission modes, from most to least permissive.
const (
	ModeBypass      Mode = "bypass"
	ModeAcceptEdits Mode = "accept-edits"
	ModeDefault     Mode = "default"
	ModeReadOnly    Mode = "read-only"
)

// Modes returns every mode in the order front ends list them.
func Modes() []Mode { return []Mode{ModeDefault, ModeAcceptEdits, ModeReadOnly, ModeBypass} }

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q: use one of default, accept-edits, read-only, bypass", s)
}

// Title is the mode's short display name.
func (m Mode) Title() string {
	switch m {
	case ModeAcceptEdits:
		return "Accept edits"
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
	case ModeReadOnly:
		return "Permission mode: read-only. Only reading and searching are allowed; write, edit and bash calls are refused, so describe the changes you would make, or ask the user to switch modes."
	case ModeBypass:
		return "Permission mode: bypass. Every tool call runs without approval; take extra care with destructive commands."
	default:
		return "Permission mode: default. Reads and searches inside the workspace run without approval; file changes, bash commands and anything outside the workspace need the user's approval, and a rejected call must not be retried without asking the user."
	}
}
