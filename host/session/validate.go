package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// HeaderError is a session header that violates session-query.md §1.1.
// Field names the offending header key.
type HeaderError struct {
	Field   string
	Message string
}

func (e *HeaderError) Error() string { return e.Message }

// LogError is an event log that cannot be loaded: a malformed envelope, a
// seq gap, a surface payload of the wrong shape, or (with Err a *FoldError)
// a surface-fold violation. Index is the offending event's position.
type LogError struct {
	Index   int
	Message string
	Err     error
}

func (e *LogError) Error() string { return e.Message }
func (e *LogError) Unwrap() error { return e.Err }

// ValidateHeader checks h against the header rules of §1.1 for the session
// id: the current format version, a matching non-empty id, a non-negative
// safe createdAt, an absolute cwd, non-negative safe seedLength and
// delegationDepth, origin only "subagent", a non-empty owner (and a
// non-empty parentSession) when present.
func ValidateHeader(h Header, id string) error {
	bad := func(field, format string, args ...any) error {
		return &HeaderError{Field: field, Message: "session header " + fmt.Sprintf(format, args...)}
	}
	switch {
	case h.Version != FormatVersion:
		return bad("version", "version must be %d, got %d", FormatVersion, h.Version)
	case h.ID == "":
		return bad("id", "id must not be empty")
	case h.ID != id:
		return bad("id", "id %q does not match session id %q", h.ID, id)
	case h.CreatedAt < 0 || h.CreatedAt > MaxSafeInteger:
		return bad("createdAt", "createdAt must be a non-negative safe integer, got %d", h.CreatedAt)
	case h.Cwd != nil && !filepath.IsAbs(*h.Cwd):
		return bad("cwd", "cwd must be an absolute path, got %q", *h.Cwd)
	case h.ParentSession != nil && *h.ParentSession == "":
		return bad("parentSession", "parentSession must not be empty when present")
	case h.SeedLength != nil && (*h.SeedLength < 0 || *h.SeedLength > MaxSafeInteger):
		return bad("seedLength", "seedLength must be a non-negative safe integer, got %d", *h.SeedLength)
	case h.DelegationDepth != nil && (*h.DelegationDepth < 0 || *h.DelegationDepth > MaxSafeInteger):
		return bad("delegationDepth", "delegationDepth must be a non-negative safe integer, got %d", *h.DelegationDepth)
	case h.Origin != nil && *h.Origin != "subagent":
		return bad("origin", `origin must be "subagent", got %q`, *h.Origin)
	case h.Owner != nil && *h.Owner == "":
		return bad("owner", "owner must be a non-empty string")
	}
	return nil
}

// ValidateLog checks a whole stored session: the header (ValidateHeader
// against its own id) and then the events (ValidateEvents). Resume and the
// query service's exact reads call it before trusting a log.
func ValidateLog(h Header, events []Event) error {
	_, err := ValidateLogFold(h, events)
	return err
}

// ValidateLogFold is ValidateLog returning the fold it built, so a caller
// that also classifies or traces the log folds it once.
func ValidateLogFold(h Header, events []Event) (*SurfaceFold, error) {
	if err := ValidateHeader(h, h.ID); err != nil {
		return nil, err
	}
	return ValidateEvents(events)
}

// ValidateEvents checks each event's envelope (non-empty type, data present,
// safe time, ignorable only true, seq equal to its index from 0), the shape
// of surface messages and request headers, and folds the surface. Errors
// are *LogError; a surface violation wraps the *FoldError.
func ValidateEvents(events []Event) (*SurfaceFold, error) {
	f, err := foldEvents(events, checkEvent)
	var fe *FoldError
	if errors.As(err, &fe) {
		return nil, &LogError{Index: fe.Seq, Message: fmt.Sprintf("invalid seed event at index %d: %s", fe.Seq, fe.Message), Err: fe}
	}
	return f, err
}

func checkEvent(i int, e Event) error {
	bad := func(format string, args ...any) error {
		return &LogError{Index: i, Message: fmt.Sprintf("seed event at index %d ", i) + fmt.Sprintf(format, args...)}
	}
	switch {
	case e.Type == "":
		return bad("has an invalid event envelope: type is empty")
	case len(bytes.TrimSpace(e.Data)) == 0:
		return bad("has an invalid event envelope: data is missing")
	case !isSafeInt64(e.Time):
		return bad("has an invalid event envelope: time %d is not a safe integer", e.Time)
	case e.Ignorable != nil && !*e.Ignorable:
		return bad("has an invalid event envelope: ignorable must be true when present")
	case e.Type == "request/header-delta":
		return bad("uses the unsupported legacy request/header-delta format")
	}
	if msg := checkPayloadShape(e); msg != "" {
		return &LogError{Index: i, Message: fmt.Sprintf("seed %s at index %d %s", e.Type, i, msg)}
	}
	if e.Seq != i {
		return bad("has seq %d (expected %d); seed must be contiguous from 0", e.Seq, i)
	}
	return nil
}

// checkPayloadShape returns what is wrong with the data of a surface event
// or request/header, or "" when it is well formed.
func checkPayloadShape(e Event) string {
	switch e.Type {
	case TypeUserMessage, TypeAssistantMessage, TypeToolResult:
		if messageShapeOK(e) {
			return ""
		}
		return checkMessageShape(e)
	case TypeRequestHeader:
		if requestHeaderOK(e.Data) {
			return ""
		}
		return checkRequestHeaderShape(e.Data)
	}
	return ""
}

type messageProbe struct {
	ID      json.RawMessage `json:"id"`
	Role    json.RawMessage `json:"role"`
	Source  json.RawMessage `json:"source"`
	Content json.RawMessage `json:"content"`
}

type sourceProbe struct {
	Kind     json.RawMessage `json:"kind"`
	Provider json.RawMessage `json:"provider"`
	Model    json.RawMessage `json:"model"`
	CallID   json.RawMessage `json:"callId"`
}

func checkMessageShape(e Event) string {
	msgRaw := e.Data
	if e.Type != TypeUserMessage {
		var wrap struct {
			Message json.RawMessage `json:"message"`
		}
		if !isJSONObject(e.Data) || json.Unmarshal(e.Data, &wrap) != nil {
			return "lacks an identified message"
		}
		msgRaw = wrap.Message
	}
	var m messageProbe
	if !isJSONObject(msgRaw) || json.Unmarshal(msgRaw, &m) != nil {
		return "lacks an identified message"
	}
	if id, ok := rawString(m.ID); !ok || id == "" {
		return "lacks an identified message"
	}
	wantRole := RoleUser
	if e.Type == TypeAssistantMessage {
		wantRole = RoleAssistant
	}
	if role, ok := rawString(m.Role); !ok || role != wantRole {
		return fmt.Sprintf("message must have role %q", wantRole)
	}
	var src sourceProbe
	if !isJSONObject(m.Source) || json.Unmarshal(m.Source, &src) != nil {
		return "message has invalid source"
	}
	kind, ok := rawString(src.Kind)
	if !ok || kind == "" {
		return "message has invalid source"
	}
	if len(bytes.TrimSpace(m.Content)) == 0 || bytes.TrimSpace(m.Content)[0] != '[' {
		return "message has invalid content"
	}
	switch e.Type {
	case TypeAssistantMessage:
		provider, okP := rawString(src.Provider)
		model, okM := rawString(src.Model)
		if kind != SourceModel || !okP || provider == "" || !okM || model == "" {
			return "message must have model source"
		}
	case TypeToolResult:
		callID, ok := rawString(src.CallID)
		if kind != SourceTool || !ok || callID == "" {
			return "message must have tool source"
		}
		if msg := checkToolResultBlock(m.Content, callID); msg != "" {
			return msg
		}
	}
	return decodePayload(e)
}

func checkToolResultBlock(content json.RawMessage, callID string) string {
	var blocks []json.RawMessage
	if json.Unmarshal(content, &blocks) != nil || len(blocks) != 1 || !isJSONObject(blocks[0]) {
		return "message must contain one tool-result block"
	}
	var block struct {
		Type       json.RawMessage `json:"type"`
		ToolCallID json.RawMessage `json:"toolCallId"`
		Content    json.RawMessage `json:"content"`
	}
	if json.Unmarshal(blocks[0], &block) != nil {
		return "message must contain one tool-result block"
	}
	typ, _ := rawString(block.Type)
	inner := bytes.TrimSpace(block.Content)
	if typ != BlockToolResult || len(inner) == 0 || inner[0] != '[' {
		return "message must contain one tool-result block"
	}
	if id, ok := rawString(block.ToolCallID); !ok || id != callID {
		return "message has mismatched tool call ids"
	}
	return ""
}

// decodePayload checks that the data decodes into its payload type, so that
// every later reader (derived history, ACP replay) can rely on it.
func decodePayload(e Event) string {
	var err error
	switch e.Type {
	case TypeUserMessage:
		var m Message
		err = json.Unmarshal(e.Data, &m)
	case TypeAssistantMessage:
		var a AssistantMessage
		err = json.Unmarshal(e.Data, &a)
	case TypeToolResult:
		var r ToolResult
		err = json.Unmarshal(e.Data, &r)
	}
	if err != nil {
		return "data does not decode: " + err.Error()
	}
	return ""
}

func checkRequestHeaderShape(data json.RawMessage) string {
	var rh struct {
		Header *struct {
			Config          json.RawMessage `json:"config"`
			AdapterDefaults json.RawMessage `json:"adapterDefaults"`
		} `json:"header"`
		Reason json.RawMessage `json:"reason"`
	}
	if !isJSONObject(data) || json.Unmarshal(data, &rh) != nil || rh.Header == nil || !isJSONObject(rh.Header.Config) {
		return "lacks provider/model"
	}
	var cfg struct {
		Provider        json.RawMessage `json:"provider"`
		Model           json.RawMessage `json:"model"`
		MaxTokens       json.RawMessage `json:"maxTokens"`
		ReasoningEffort json.RawMessage `json:"reasoningEffort"`
	}
	if json.Unmarshal(rh.Header.Config, &cfg) != nil {
		return "lacks provider/model"
	}
	provider, okP := rawString(cfg.Provider)
	model, okM := rawString(cfg.Model)
	if !okP || provider == "" || !okM || model == "" {
		return "lacks provider/model"
	}
	if len(cfg.ReasoningEffort) > 0 {
		if effort, ok := rawString(cfg.ReasoningEffort); !ok || effort == "" {
			return "has an invalid reasoningEffort"
		}
	}
	if len(rh.Header.AdapterDefaults) > 0 {
		var marks map[string]json.RawMessage
		if !isJSONObject(rh.Header.AdapterDefaults) || json.Unmarshal(rh.Header.AdapterDefaults, &marks) != nil {
			return "has invalid adapterDefaults"
		}
		for key, v := range marks {
			if string(bytes.TrimSpace(v)) != "true" {
				return "has invalid adapterDefaults"
			}
			switch key {
			case "reasoningEffort":
				if len(cfg.ReasoningEffort) == 0 {
					return "has invalid adapterDefaults"
				}
			case "maxTokens":
				if len(cfg.MaxTokens) == 0 {
					return "has invalid adapterDefaults"
				}
			default:
				return "has invalid adapterDefaults"
			}
		}
	}
	if reason, ok := rawString(rh.Reason); ok && reason == "fallback" {
		return `uses the unsupported legacy request/header reason "fallback"`
	}
	return ""
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// rawString decodes raw as a JSON string; absent, null or any other type is
// not a string.
func rawString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
