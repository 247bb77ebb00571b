package session

import (
	"bytes"

	"github.com/seed-e9b4dba4/dsh/host/jsonscan"
)

// The surface messages are most of a log's bytes, and checkMessageShape
// decodes each of them several times with encoding/json (the shape probes,
// then the whole payload). messageShapeOK walks the payload once in place
// and answers only "certainly well formed": whenever it is not sure (a key
// encoding/json would match case-insensitively, a repeated field, a null
// where a value is expected, anything unusual) it says false and
// checkMessageShape decides and words the error, so the verdicts are
// always checkMessageShape's.

// maxBlockNesting bounds the tool-result blocks nested inside one another
// that the quick check follows; deeper ones go to the slow path.
const maxBlockNesting = 16

// messageShapeOK reports whether checkMessageShape(e) would return "" for
// a user/message, assistant/message or tool/result event. False means
// "not known", never "malformed".
func messageShapeOK(e Event) bool {
	b := e.Data
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	var end int
	var ok bool
	switch e.Type {
	case TypeUserMessage:
		end, ok = messageOK(b, i, RoleUser, SourceUser)
	case TypeAssistantMessage:
		end, ok = payloadOK(b, i, RoleAssistant, SourceModel, assistantFields)
	case TypeToolResult:
		end, ok = payloadOK(b, i, RoleUser, SourceTool, toolResultFields)
	default:
		return false
	}
	return ok && jsonscan.SkipSpace(b, end) == len(b)
}

// Fields of the payloads as encoding/json decodes them (AssistantMessage,
// ToolResult, Message, Usage, ToolErrorInfo, the message source and
// ContentBlock's probe). Index 0 of both payloads is "message".
var (
	assistantFields  = []string{"message", "turn", "step", "usage", "interrupted"}
	toolResultFields = []string{"message", "turn", "step", "error", "meta", "mutations"}
	messageFields    = []string{"id", "role", "source", "content"}
	sourceFields     = []string{"kind", "provider", "model", "callId"}
	usageFields      = []string{"inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens"}
	toolErrorFields  = []string{"name", "code"}
	blockFields      = []string{"type", "text", "id", "name", "arguments", "toolCallId", "content", "isError"}
)

// fields walks the object at b[i] and calls member with the index in
// names of each member whose key is one of them. It gives up on a key
// with escapes or non-ASCII bytes, on a key that matches a name only
// case-insensitively and on a name given twice: encoding/json's field
// matching and last-one-wins would need more care than a quick check is
// worth. Other members are validated and skipped.
func fields(b []byte, i int, names []string, member func(field, v int) (int, bool)) (int, bool) {
	var seen uint32
	return jsonscan.Object(b, i, func(key []byte, flags jsonscan.StrFlags, v int) (int, bool) {
		if !flags.Plain() {
			return v, false
		}
		for f, name := range names {
			if string(key) == name {
				if seen&(1<<f) != 0 {
					return v, false
				}
				seen |= 1 << f
				return member(f, v)
			}
			if bytes.EqualFold(key, []byte(name)) {
				return v, false
			}
		}
		return jsonscan.Value(b, v)
	})
}

// payloadOK checks an assistant/message or tool/result payload: its
// number fields, its message (names[0]) and the other optional fields.
func payloadOK(b []byte, i int, role, kind string, names []string) (int, bool) {
	hasMessage := false
	end, ok := fields(b, i, names, func(f, v int) (int, bool) {
		switch names[f] {
		case "message":
			hasMessage = true
			return messageOK(b, v, role, kind)
		case "turn", "step":
			return intOrNull(b, v)
		case "usage":
			return objectOrNull(b, v, usageFields, func(_, v int) (int, bool) { return intOrNull(b, v) })
		case "interrupted":
			return boolOrNull(b, v)
		case "error":
			return objectOrNull(b, v, toolErrorFields, func(_, v int) (int, bool) { return stringOrNull(b, v) })
		}
		return jsonscan.Value(b, v) // meta, mutations: raw
	})
	return end, ok && hasMessage
}

// messageOK checks a message object: a non-empty string id, the wanted
// role, a source of the wanted kind (with what that kind requires) and
// content blocks that decode; a tool result's content is one tool-result
// block answering the source's call.
func messageOK(b []byte, i int, role, kind string) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	var id, gotRole, callID []byte
	var blocks blockCount
	hasSource, hasContent := false, false
	end, ok := fields(b, i, messageFields, func(f, v int) (int, bool) {
		switch messageFields[f] {
		case "id":
			return stringToken(b, v, &id)
		case "role":
			return stringToken(b, v, &gotRole)
		case "source":
			hasSource = true
			return sourceOK(b, v, kind, &callID)
		}
		hasContent = true
		return blocksOK(b, v, 0, &blocks)
	})
	if !ok || len(id) <= 2 || !hasSource || !hasContent || !tokenIs(gotRole, role) {
		return end, false
	}
	if kind == SourceTool {
		// checkToolResultBlock: one tool-result block with array content
		// answering the source's call.
		first := blocks.first
		if blocks.n != 1 || !tokenIs(first.typ, BlockToolResult) || first.content < 0 || b[first.content] != '[' ||
			first.toolCallID == nil || !sameString(first.toolCallID, callID) {
			return end, false
		}
	}
	return end, true
}

// sourceOK checks a message source: an object whose kind is the wanted
// one (any non-empty kind for a user message), with a non-empty provider
// and model for a model source and a non-empty callId for a tool source,
// which it returns.
func sourceOK(b []byte, i int, kind string, callID *[]byte) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	var gotKind, provider, model []byte
	end, ok := fields(b, i, sourceFields, func(f, v int) (int, bool) {
		// The source is kept raw: any value decodes, but these four are
		// only of use as strings.
		switch sourceFields[f] {
		case "kind":
			return stringToken(b, v, &gotKind)
		case "provider":
			return stringToken(b, v, &provider)
		case "model":
			return stringToken(b, v, &model)
		}
		return stringToken(b, v, callID)
	})
	if !ok || len(gotKind) <= 2 {
		return end, false
	}
	switch kind {
	case SourceModel:
		ok = tokenIs(gotKind, SourceModel) && len(provider) > 2 && len(model) > 2
	case SourceTool:
		ok = tokenIs(gotKind, SourceTool) && len(*callID) > 2
	}
	return end, ok
}

// blockCount is what a content array held: how many blocks, and the
// first one's shape.
type blockCount struct {
	n     int
	first blockInfo
}

// blocksOK checks a content array whose every element decodes as a
// ContentBlock, counting them into count when it is not nil.
func blocksOK(b []byte, i, depth int, count *blockCount) (int, bool) {
	if i >= len(b) || b[i] != '[' || depth > maxBlockNesting {
		return i, false
	}
	return jsonscan.Array(b, i, func(v int) (int, bool) {
		end, info, ok := blockOK(b, v, depth)
		if count != nil {
			if count.n == 0 {
				count.first = info
			}
			count.n++
		}
		return end, ok
	})
}

// blockInfo is what a tool result's shape check needs of its block.
type blockInfo struct {
	typ, toolCallID []byte // string tokens (nil: absent or null)
	content         int    // index of the content value (-1: absent)
}

// blockOK checks one content block as ContentBlock.UnmarshalJSON decodes
// it: an object whose probe fields have their types, a text for a text or
// reasoning block, and a tool-result block's content blocks in turn (or a
// string).
func blockOK(b []byte, i, depth int) (int, blockInfo, bool) {
	info := blockInfo{content: -1}
	if i >= len(b) || b[i] != '{' {
		return i, info, false
	}
	var text []byte
	end, ok := fields(b, i, blockFields, func(f, v int) (int, bool) {
		switch blockFields[f] {
		case "type":
			return stringOrNullToken(b, v, &info.typ)
		case "text":
			return stringOrNullToken(b, v, &text)
		case "toolCallId":
			return stringOrNullToken(b, v, &info.toolCallID)
		case "id", "name":
			return stringOrNull(b, v)
		case "isError":
			return boolOrNull(b, v)
		case "content":
			info.content = v
		}
		return jsonscan.Value(b, v) // arguments, content: raw
	})
	if !ok {
		return end, info, false
	}
	switch {
	case tokenIs(info.typ, BlockText), tokenIs(info.typ, BlockReasoning):
		ok = text != nil
	case tokenIs(info.typ, BlockToolResult) && info.content >= 0:
		switch b[info.content] {
		case '[':
			_, ok = blocksOK(b, info.content, depth+1, nil)
		case '"':
		default:
			// null is no content; anything else fails to decode.
			_, ok = jsonscan.Literal(b, info.content, "null")
		}
	}
	return end, info, ok
}

// stringToken reads a string token into *dst; anything else is not known.
func stringToken(b []byte, v int, dst *[]byte) (int, bool) {
	if b[v] != '"' {
		return v, false
	}
	end, _, ok := jsonscan.String(b, v)
	if ok {
		*dst = b[v:end]
	}
	return end, ok
}

// stringOrNullToken reads a string token into *dst (left nil for null).
func stringOrNullToken(b []byte, v int, dst *[]byte) (int, bool) {
	if b[v] == 'n' {
		return jsonscan.Literal(b, v, "null")
	}
	return stringToken(b, v, dst)
}

func stringOrNull(b []byte, v int) (int, bool) {
	var tok []byte
	return stringOrNullToken(b, v, &tok)
}

func intOrNull(b []byte, v int) (int, bool) {
	if b[v] == 'n' {
		return jsonscan.Literal(b, v, "null")
	}
	end, ok := jsonscan.Number(b, v)
	if !ok {
		return end, false
	}
	_, ok = jsonscan.Int(b[v:end])
	return end, ok
}

func boolOrNull(b []byte, v int) (int, bool) {
	switch b[v] {
	case 'n':
		return jsonscan.Literal(b, v, "null")
	case 't':
		return jsonscan.Literal(b, v, "true")
	case 'f':
		return jsonscan.Literal(b, v, "false")
	}
	return v, false
}

// objectOrNull checks null or an object whose named members pass member.
func objectOrNull(b []byte, v int, names []string, member func(field, v int) (int, bool)) (int, bool) {
	switch b[v] {
	case 'n':
		return jsonscan.Literal(b, v, "null")
	case '{':
		return fields(b, v, names, member)
	}
	return v, false
}

// tokenIs reports whether the string token tok decodes to s.
func tokenIs(tok []byte, s string) bool {
	if len(tok) < 2 {
		return false
	}
	if bytes.IndexByte(tok, '\\') < 0 {
		// Without escapes the token is its value, unless it holds invalid
		// UTF-8, which never equals a valid s.
		return string(tok[1:len(tok)-1]) == s
	}
	return string(jsonscan.Unquote(nil, tok)) == s
}

// sameString reports whether two string tokens decode to the same value.
func sameString(a, b []byte) bool {
	return bytes.Equal(a, b) || bytes.Equal(jsonscan.Unquote(nil, a), jsonscan.Unquote(nil, b))
}

// Fields of a request/header's data as checkRequestHeaderShape decodes
// them, and the marks adapterDefaults may hold.
var (
	requestHeaderFields = []string{"header", "reason"}
	headerFields        = []string{"config", "adapterDefaults"}
	configFields        = []string{"provider", "model", "maxTokens", "reasoningEffort"}
)

// requestHeaderOK reports whether checkRequestHeaderShape(data) would
// return "", walking the data once in place where encoding/json decodes
// it twice or three times (its system prompt and tools are most of a short
// session's bytes). Like messageShapeOK, false means "not known", never
// "malformed".
func requestHeaderOK(b []byte) bool {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	var h headerMarks
	end, ok := fields(b, i, requestHeaderFields, func(f, v int) (int, bool) {
		if f == 0 {
			return h.read(b, v)
		}
		if b[v] != '"' {
			return jsonscan.Value(b, v) // only the string "fallback" is refused
		}
		var reason []byte
		end, ok := stringToken(b, v, &reason)
		return end, ok && !tokenIs(reason, "fallback")
	})
	return ok && h.ok() && jsonscan.SkipSpace(b, end) == len(b)
}

// headerMarks is what requestHeaderOK learns of a request header: whether
// its config names a provider and a model and which optional settings it
// holds, and which of them adapterDefaults marks.
type headerMarks struct {
	header, config, named         bool
	maxTokens, effort             bool
	markedMaxTokens, markedEffort bool
}

// read checks the header object at b[v].
func (h *headerMarks) read(b []byte, v int) (int, bool) {
	if b[v] != '{' {
		return v, false
	}
	h.header = true
	return fields(b, v, headerFields, func(f, v int) (int, bool) {
		if f == 0 {
			return h.readConfig(b, v)
		}
		return h.readMarks(b, v)
	})
}

// readConfig checks the config object at b[v]: provider and model
// non-empty strings, reasoningEffort, if there, one too.
func (h *headerMarks) readConfig(b []byte, v int) (int, bool) {
	if b[v] != '{' {
		return v, false
	}
	h.config = true
	var provider, model []byte
	end, ok := fields(b, v, configFields, func(f, v int) (int, bool) {
		switch configFields[f] {
		case "provider":
			return stringToken(b, v, &provider)
		case "model":
			return stringToken(b, v, &model)
		case "maxTokens":
			h.maxTokens = true
			return jsonscan.Value(b, v)
		}
		var effort []byte
		h.effort = true
		end, ok := stringToken(b, v, &effort)
		return end, ok && len(effort) > 2
	})
	// A string token longer than its quotes decodes to a non-empty string.
	h.named = len(provider) > 2 && len(model) > 2
	return end, ok
}

// readMarks checks adapterDefaults at b[v]: an object whose members are
// maxTokens or reasoningEffort, each true.
func (h *headerMarks) readMarks(b []byte, v int) (int, bool) {
	if b[v] != '{' {
		return v, false
	}
	return jsonscan.Object(b, v, func(key []byte, flags jsonscan.StrFlags, v int) (int, bool) {
		marked := &h.markedMaxTokens
		switch {
		case !flags.Plain():
			return v, false
		case string(key) == "reasoningEffort":
			marked = &h.markedEffort
		case string(key) != "maxTokens":
			return v, false
		}
		*marked = true // given twice, each must be true: the map keeps the last
		return jsonscan.Literal(b, v, "true")
	})
}

// ok reports whether what was read is a well-formed request header.
func (h *headerMarks) ok() bool {
	return h.header && h.config && h.named && (h.maxTokens || !h.markedMaxTokens) && (h.effort || !h.markedEffort)
}
