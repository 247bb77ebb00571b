package config

import "fmt"

// Error is a problem with one config key in one source. Load returns these
// (joined with errors.Join when there are several); match them with errors.As.
type Error struct {
	// Key is the dotted key path as written, e.g. "llm.modle".
	Key string
	// Source names where the value came from: a file path, an embedded file
	// ("configs/profiles/x.yaml (embedded)"), "environment variable DSH_X" or
	// a flag ("--set llm.model=x"); it is empty for a section's value that
	// came from no source (Schema.Check).
	Source string
	// Unknown is set when the key does not exist.
	Unknown bool
	// Problem completes the sentence "config key K in S ...", e.g.
	// "must be an integer"; empty for unknown keys.
	Problem string
	// Hint is the closest known key, for unknown keys that look like a typo.
	Hint string
}

func (e *Error) Error() string {
	if e.Unknown {
		msg := fmt.Sprintf("unknown config key %q in %s", e.Key, e.Source)
		if e.Hint != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", e.Hint)
		}
		return msg
	}
	if e.Source == "" {
		return fmt.Sprintf("config key %q %s", e.Key, e.Problem)
	}
	return fmt.Sprintf("config key %q in %s %s", e.Key, e.Source, e.Problem)
}
