package prompt

import (
	"encoding/json"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// PluginName is the source plugin of runtime-context messages.
const PluginName = "dsh/system-prompt"

// NoRuntimeContextText replaces the snapshot once every context part has
// become empty after a snapshot was sent, so the model stops relying on it.
const NoRuntimeContextText = "Current runtime context: none. Earlier runtime-context snapshots no longer apply."

// RuntimeContextMessage is the user message carrying a runtime-context
// snapshot. Its source records the parts it was built from:
// {kind:"plugin", plugin:"dsh/system-prompt", form:"snapshot", sections:[{name, text}]}.
func RuntimeContextMessage(text string, parts []Rendered, id string) session.Message {
	if parts == nil {
		parts = []Rendered{}
	}
	source := session.MustMarshal(struct {
		Kind     string     `json:"kind"`
		Plugin   string     `json:"plugin"`
		Form     string     `json:"form"`
		Sections []Rendered `json:"sections"`
	}{session.SourcePlugin, PluginName, "snapshot", parts})
	return userMessage(text, source, id)
}

// NoRuntimeContextMessage is the user message saying earlier snapshots no
// longer apply; its source is {kind:"plugin", plugin:"dsh/system-prompt"}.
func NoRuntimeContextMessage(id string) session.Message {
	return userMessage(NoRuntimeContextText, session.PluginSource(PluginName, ""), id)
}

// IsRuntimeContext reports whether m is one of the messages above: the
// runtime context the registry adds for the model each turn, which a
// transcript for people leaves out and compaction folds away.
func IsRuntimeContext(m session.Message) bool {
	if m.SourceKind() != session.SourcePlugin {
		return false
	}
	var src struct {
		Plugin string `json:"plugin"`
	}
	return json.Unmarshal(m.Source, &src) == nil && src.Plugin == PluginName
}

func userMessage(text string, source json.RawMessage, id string) session.Message {
	return session.Message{
		Role:    session.RoleUser,
		Content: []session.ContentBlock{session.TextBlock(text)},
		Source:  source,
		ID:      id,
	}
}
