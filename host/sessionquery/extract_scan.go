package sessionquery

import (
	"bytes"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/jsonscan"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// maxBlockNesting bounds how deep tool results nested in tool results are
// followed before the payload is left to the reference extractor.
const maxBlockNesting = 64

// textScanner extracts an event's semantic text in one validating pass over
// its payload, reading only the members the rules name and writing the
// joined text straight into a reused buffer. It vouches only for payloads
// that encoding/json decodes without any error; a malformed block, a type
// mismatch, a key that merely case-folds to a wanted one, a duplicate key or
// invalid JSON makes it give up, and extractTextJSON decides instead. The
// zero value is ready; it is not safe for concurrent use.
type textScanner struct {
	b       []byte // the payload being scanned
	out     []byte // the joined text so far
	scratch []byte // one unquoted string
	nesting int    // content arrays entered
}

// text returns ExtractText(e).
func (x *textScanner) text(e session.Event) string {
	switch e.Type {
	case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolCall,
		session.TypeToolResult, session.TypeTodoWrite, session.TypeTurnEnd:
	default:
		return ""
	}
	if !x.scan(e.Type, e.Data) {
		return extractTextJSON(e)
	}
	return string(x.out)
}

// token is a member's value: a string token, null, or (for raw members) any
// JSON value. A zero token is an absent member.
type token struct {
	raw   []byte
	flags jsonscan.StrFlags
}

func (t token) isString() bool { return len(t.raw) > 0 && t.raw[0] == '"' }

// stringOrNull reads a member that encoding/json decodes into a string or
// a *string: only a string or null decode without an error.
func (x *textScanner) stringOrNull(v int, dst *token) (int, bool) {
	switch x.b[v] {
	case '"':
		end, flags, ok := jsonscan.String(x.b, v)
		if ok {
			*dst = token{raw: x.b[v:end], flags: flags}
		}
		return end, ok
	case 'n':
		end, ok := jsonscan.Value(x.b, v)
		if ok {
			*dst = token{raw: x.b[v:end]}
		}
		return end, ok
	}
	return v, false
}

// raw reads a member that encoding/json decodes into a json.RawMessage.
func (x *textScanner) raw(v int, dst *token) (int, bool) {
	if x.b[v] == '"' {
		return x.stringOrNull(v, dst)
	}
	end, ok := jsonscan.Value(x.b, v)
	if ok {
		*dst = token{raw: x.b[v:end]}
	}
	return end, ok
}

// skip validates a value nobody reads.
func (x *textScanner) skip(v int) (int, bool) { return jsonscan.Value(x.b, v) }

// object walks the object or null at b[v] (a struct or pointer-to-struct
// member), calling field with the index in keys of each wanted member.
// Other members are validated and skipped.
func (x *textScanner) object(v int, keys []string, field func(k, v int) (int, bool)) (int, bool) {
	if x.b[v] == 'n' {
		return x.skip(v)
	}
	if x.b[v] != '{' {
		return v, false
	}
	var seen uint32
	return jsonscan.Object(x.b, v, func(key []byte, flags jsonscan.StrFlags, v int) (int, bool) {
		if !flags.Plain() {
			return v, false
		}
		for k, name := range keys {
			if string(key) == name {
				if seen&(1<<k) != 0 {
					return v, false
				}
				seen |= 1 << k
				return field(k, v)
			}
		}
		for _, name := range keys {
			if len(name) == len(key) && bytes.EqualFold(key, []byte(name)) {
				return v, false
			}
		}
		return x.skip(v)
	})
}

// part appends one part the way joinParts does: trimmed, dropped when
// empty, "\n" between parts.
func (x *textScanner) part(p []byte) {
	if len(p) > 0 && (p[0] <= ' ' || p[0] >= utf8.RuneSelf || p[len(p)-1] <= ' ' || p[len(p)-1] >= utf8.RuneSelf) {
		p = bytes.TrimFunc(p, IsJSSpace)
	}
	if len(p) == 0 {
		return
	}
	if len(x.out) > 0 {
		x.out = append(x.out, '\n')
	}
	x.out = append(x.out, p...)
}

// str returns a string token's decoded value (in scratch when it must be
// unquoted), or nil for null and absent members.
func (x *textScanner) str(t token) []byte {
	if !t.isString() {
		return nil
	}
	inner := t.raw[1 : len(t.raw)-1]
	if t.flags&jsonscan.Escaped == 0 && (t.flags&jsonscan.NonASCII == 0 || utf8.Valid(inner)) {
		return inner
	}
	x.scratch = jsonscan.Unquote(x.scratch[:0], t.raw)
	return x.scratch
}

// rawText appends a raw member the way rawText reads it: a string's value,
// nothing for null, any other value's JSON text.
func (x *textScanner) rawText(t token) {
	switch {
	case t.isString():
		x.part(x.str(t))
	case string(t.raw) != "null":
		x.part(t.raw)
	}
}

var (
	contentKeys = []string{"content"}
	messageKeys = []string{"message"}
	resultKeys  = []string{"message", "error"}
	failureKeys = []string{"name", "code"}
	callKeys    = []string{"name", "arguments"}
	todosKeys   = []string{"todos"}
	todoKeys    = []string{"content", "status"}
	turnEndKeys = []string{"reason"}
	reasonKeys  = []string{"kind", "error"}
	errorKeys   = []string{"message"}
	blockKeys   = []string{"type", "text", "name", "arguments", "content"}
)

// scan writes the text of a payload of one of the text-bearing types into
// out; false means extractTextJSON must decide.
func (x *textScanner) scan(typ string, data []byte) bool {
	x.b, x.out, x.nesting = data, x.out[:0], 0
	v := jsonscan.SkipSpace(data, 0)
	if v >= len(data) {
		return false
	}
	var end int
	var ok bool
	switch typ {
	case session.TypeUserMessage:
		end, ok = x.object(v, contentKeys, func(_, v int) (int, bool) { return x.content(v) })
	case session.TypeAssistantMessage:
		end, ok = x.object(v, messageKeys, func(_, v int) (int, bool) { return x.message(v) })
	case session.TypeToolResult:
		end, ok = x.toolResult(v)
	case session.TypeToolCall:
		var name, args token
		end, ok = x.object(v, callKeys, func(k, v int) (int, bool) {
			if k == 0 {
				return x.stringOrNull(v, &name)
			}
			return x.raw(v, &args)
		})
		if ok {
			x.part(x.str(name))
			x.rawText(args)
		}
	case session.TypeTodoWrite:
		end, ok = x.object(v, todosKeys, func(_, v int) (int, bool) { return x.todos(v) })
	case session.TypeTurnEnd:
		end, ok = x.object(v, turnEndKeys, func(_, v int) (int, bool) { return x.reason(v) })
	}
	return ok && jsonscan.SkipSpace(data, end) == len(data)
}

// message reads {"content": blocks} or null.
func (x *textScanner) message(v int) (int, bool) {
	return x.object(v, contentKeys, func(_, v int) (int, bool) { return x.content(v) })
}

// toolResult reads the result's blocks, then its error's name and code
// (whatever the member order).
func (x *textScanner) toolResult(v int) (int, bool) {
	var name, code token
	end, ok := x.object(v, resultKeys, func(k, v int) (int, bool) {
		if k == 0 {
			return x.message(v)
		}
		return x.object(v, failureKeys, func(k, v int) (int, bool) {
			if k == 0 {
				return x.stringOrNull(v, &name)
			}
			return x.stringOrNull(v, &code)
		})
	})
	if ok {
		// A null error leaves both absent, which adds nothing.
		x.part(x.str(name))
		x.part(x.str(code))
	}
	return end, ok
}

// content reads a content-block array. Any other value decodes (into a
// json.RawMessage) but carries no blocks.
func (x *textScanner) content(v int) (int, bool) {
	if x.b[v] != '[' {
		return x.skip(v)
	}
	if x.nesting++; x.nesting > maxBlockNesting {
		return v, false
	}
	end, ok := jsonscan.Array(x.b, v, x.block)
	x.nesting--
	return end, ok
}

// block reads one content block. A tool result's nested content is read as
// it comes when the block's type came first (as every writer puts it), and
// again from where it starts otherwise.
func (x *textScanner) block(v int) (int, bool) {
	var typ, text, name, args token
	nested, eager := -1, false
	end, ok := x.object(v, blockKeys, func(k, v int) (int, bool) {
		switch k {
		case 0:
			return x.stringOrNull(v, &typ)
		case 1:
			return x.stringOrNull(v, &text)
		case 2:
			return x.stringOrNull(v, &name)
		case 3:
			return x.raw(v, &args)
		}
		if string(x.str(typ)) == session.BlockToolResult {
			eager = true
			return x.nestedContent(v)
		}
		nested = v
		return x.skip(v)
	})
	if !ok {
		return end, false
	}
	switch string(x.str(typ)) {
	case session.BlockText:
		x.part(x.str(text))
	case session.BlockToolCall:
		x.part(x.str(name))
		x.rawText(args)
	case session.BlockToolResult:
		if !eager && nested >= 0 {
			if _, ok := x.nestedContent(nested); !ok {
				return end, false
			}
		}
	}
	return end, true
}

// nestedContent reads a tool-result block's content: older writers stored
// a string, newer ones blocks.
func (x *textScanner) nestedContent(v int) (int, bool) {
	if x.b[v] == '"' {
		end, flags, ok := jsonscan.String(x.b, v)
		if ok {
			x.part(x.str(token{raw: x.b[v:end], flags: flags}))
		}
		return end, ok
	}
	return x.content(v)
}

// todos reads the todo list: each todo's status, then its content.
func (x *textScanner) todos(v int) (int, bool) {
	switch x.b[v] {
	case 'n':
		return x.skip(v)
	case '[':
	default:
		return v, false
	}
	return jsonscan.Array(x.b, v, func(v int) (int, bool) {
		var content, status token
		end, ok := x.object(v, todoKeys, func(k, v int) (int, bool) {
			if k == 0 {
				return x.stringOrNull(v, &content)
			}
			return x.stringOrNull(v, &status)
		})
		if ok {
			x.part(x.str(status))
			x.part(x.str(content))
		}
		return end, ok
	})
}

// reason reads a turn end's reason: its kind, and an error's message.
func (x *textScanner) reason(v int) (int, bool) {
	var kind, message token
	end, ok := x.object(v, reasonKeys, func(k, v int) (int, bool) {
		if k == 0 {
			return x.stringOrNull(v, &kind)
		}
		return x.object(v, errorKeys, func(_, v int) (int, bool) { return x.stringOrNull(v, &message) })
	})
	if !ok {
		return end, false
	}
	switch k := x.str(kind); string(k) {
	case session.EndError:
		x.part(k)
		x.part(x.str(message))
	case session.EndAborted, session.EndMaxTokens, session.EndInterrupted:
		// An abort's cause is who cancelled, not what the session said.
		x.part(k)
	}
	return end, ok
}
