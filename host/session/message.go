package session

import "encoding/json"

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message source kinds.
const (
	SourceUser         = "user"
	SourcePlugin       = "plugin"
	SourceTool         = "tool"
	SourceModel        = "model"
	SourceInstructions = "agent-instructions"
)

// Message is a user-role or assistant-role message as stored in user/message,
// assistant/message and tool/result payloads. Source is kept raw because its
// shape depends on its kind ({kind:"user"}, {kind:"plugin", plugin, form?,
// ...}, {kind:"tool", callId}, {kind:"model", provider, model}); use
// SourceKind to branch on it.
//
// JSON key order: user messages content, source, role, id; assistant messages
// role, content, source, id.
type Message struct {
	Role    string
	Content []ContentBlock
	Source  json.RawMessage
	ID      string
}

type userMessageJSON struct {
	Content []ContentBlock  `json:"content"`
	Source  json.RawMessage `json:"source"`
	Role    string          `json:"role"`
	ID      string          `json:"id"`
}

type assistantMessageJSON struct {
	Role    string          `json:"role"`
	Content []ContentBlock  `json:"content"`
	Source  json.RawMessage `json:"source"`
	ID      string          `json:"id"`
}

// MarshalJSON implements json.Marshaler.
func (m Message) MarshalJSON() ([]byte, error) {
	content := m.Content
	if content == nil {
		content = []ContentBlock{}
	}
	source := m.Source
	if len(source) == 0 {
		source = json.RawMessage("{}")
	}
	if m.Role == RoleAssistant {
		return Marshal(assistantMessageJSON{m.Role, content, source, m.ID})
	}
	return Marshal(userMessageJSON{content, source, m.Role, m.ID})
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *Message) UnmarshalJSON(data []byte) error {
	var v userMessageJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*m = Message{Role: v.Role, Content: v.Content, Source: v.Source, ID: v.ID}
	return nil
}

// SourceKind returns the "kind" of the message source, or "" if absent.
func (m Message) SourceKind() string {
	var s struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(m.Source, &s)
	return s.Kind
}

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	c := m
	c.Source = cloneRaw(m.Source)
	if m.Content != nil {
		c.Content = make([]ContentBlock, len(m.Content))
		for i, b := range m.Content {
			c.Content[i] = b.Clone()
		}
	}
	return c
}

// UserSource is the source of a human prompt.
var UserSource = json.RawMessage(`{"kind":"user"}`)

// PluginSource returns {kind:"plugin", plugin, form?}.
func PluginSource(plugin, form string) json.RawMessage {
	return MustMarshal(struct {
		Kind   string `json:"kind"`
		Plugin string `json:"plugin"`
		Form   string `json:"form,omitempty"`
	}{SourcePlugin, plugin, form})
}

// ToolSource returns {kind:"tool", callId}.
func ToolSource(callID string) json.RawMessage {
	return MustMarshal(struct {
		Kind   string `json:"kind"`
		CallID string `json:"callId"`
	}{SourceTool, callID})
}

// ModelSource returns {kind:"model", provider, model}.
func ModelSource(provider, model string) json.RawMessage {
	return MustMarshal(struct {
		Kind     string `json:"kind"`
		Provider string `json:"provider"`
		Model    string `json:"model"`
	}{SourceModel, provider, model})
}
