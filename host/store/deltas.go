package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"hash"
	"strconv"

	"github.com/seed-e9b4dba4/dsh/host/jsonscan"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/stream"
)

// A streamed block's text would otherwise be stored three times: as its
// deltas (which crash repair needs), in the block-end chunk and in the
// assistant/message (a tool call's arguments a fourth time, in tool/call).
// So the writer stores a long string of a block-end chunk, an
// assistant/message or a tool/call that is byte for byte the concatenation
// of one block's deltas as an empty string plus a reference on the line:
//
//	{"type":"assistant/message",…,"data":{…"text":""…},…,"deltaRefs":[
//	  {"path":["message","content",1,"text"],"turn":1,"step":1,"index":1,"from":9,"to":4108,"bytes":54000}]}
//
// The reader puts the deltas back, so every reader sees the event exactly
// as it was appended. A reference covers the bodies (the JSON text between
// the quotes) of the delta field ("delta", or "argumentsDelta" for a tool
// call) of every assistant/chunk delta event with seq in [from, to] whose
// turn, step and chunk index match. Comparing encoded bodies, not decoded
// strings, makes the reconstruction exact by construction; the writer
// proves the match with a running SHA-256 of the bodies, holding no text.
// Strings under compactMinBytes stay inline: the saving is small there and
// short logs stay self-contained for anyone reading them by eye.

// compactMinBytes is the shortest encoded string body stored as a reference.
const compactMinBytes = 1 << 10

// maxRefDepth bounds how deep the writer looks for strings to compact.
const maxRefDepth = 16

// deltaRef is one reference on a stored line (the deltaRefs key).
type deltaRef struct {
	Path  []json.RawMessage `json:"path"` // object keys (strings) and array indexes (integers) from data
	Turn  int               `json:"turn"`
	Step  int               `json:"step"`
	Index int               `json:"index"`
	From  int               `json:"from"`
	To    int               `json:"to"`
	Bytes int               `json:"bytes"` // length of the spliced-in body
}

type streamKey struct{ turn, step, index int }

// deltaStream is what the writer knows of one block's deltas so far.
type deltaStream struct {
	from, to int
	n        int
	h        hash.Hash
	sum      []byte // h's sum at n bytes, nil when stale
	closed   bool   // its attempt finished; a later delta starts a new stream
}

func (s *deltaStream) digest() []byte {
	if s.sum == nil {
		s.sum = s.h.Sum(nil)
	}
	return s.sum
}

// deltaTracker follows the deltas a writer appends, one stream per block
// of the current step; a step or turn boundary forgets them all.
type deltaTracker struct {
	streams map[streamKey]*deltaStream
	longest int // longest stream body, to skip the search when none qualifies
}

func (t *deltaTracker) reset() { *t = deltaTracker{} }

// chunkView is the part of an assistant/chunk event's data the tracker and
// RestoreDeltas read, found by one scan without decoding: the writer and
// the reader must see a chunk the same way, and the writer does it for
// every chunk it appends.
type chunkView struct {
	turn, step, index int
	typ               []byte // aliases the data
	body              []byte // the delta's encoded text, between the quotes; aliases the data
	delta             bool   // a text, reasoning or tool-call delta
}

// viewChunk scans an assistant/chunk payload; ok is false when it is not
// an object of the expected shape.
func viewChunk(data []byte) (c chunkView, ok bool) {
	var delta, argsDelta []byte
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return c, false
	}
	_, ok = jsonscan.Object(data, i, func(key []byte, _ jsonscan.StrFlags, v int) (int, bool) {
		switch string(key) {
		case "turn":
			return intAt(data, v, &c.turn)
		case "step":
			return intAt(data, v, &c.step)
		case "chunk":
			if data[v] != '{' {
				return jsonscan.Value(data, v)
			}
			return jsonscan.Object(data, v, func(key []byte, _ jsonscan.StrFlags, v int) (int, bool) {
				switch string(key) {
				case "type":
					end, tok, flags, ok := stringAt(data, v)
					if tok != nil && flags.Plain() {
						c.typ = tok[1 : len(tok)-1]
					}
					return end, ok
				case "index":
					return intAt(data, v, &c.index)
				case "delta", "argumentsDelta":
					end, tok, _, ok := stringAt(data, v)
					if tok != nil {
						if key[0] == 'd' {
							delta = tok[1 : len(tok)-1]
						} else {
							argsDelta = tok[1 : len(tok)-1]
						}
					}
					return end, ok
				}
				return jsonscan.Value(data, v)
			})
		}
		return jsonscan.Value(data, v)
	})
	if !ok {
		return chunkView{}, false
	}
	switch string(c.typ) {
	case stream.ChunkTextDelta, stream.ChunkReasoningDelta:
		c.body, c.delta = delta, true
	case stream.ChunkToolCallDelta:
		c.body, c.delta = argsDelta, true
	}
	return c, true
}

// stringAt scans the value at v; tok is the string token (quotes
// included) when it is a string, nil for any other value.
func stringAt(data []byte, v int) (end int, tok []byte, flags jsonscan.StrFlags, ok bool) {
	if data[v] != '"' {
		end, ok = jsonscan.Value(data, v)
		return end, nil, 0, ok
	}
	end, flags, ok = jsonscan.String(data, v)
	return end, data[v:end], flags, ok
}

// intAt stores the integer at v in dst (0 for anything else).
func intAt(data []byte, v int, dst *int) (int, bool) {
	end, ok := jsonscan.Value(data, v)
	if !ok {
		return end, false
	}
	if n, isInt := jsonscan.Int(data[v:end]); isInt {
		*dst = int(n)
	} else {
		*dst = 0
	}
	return end, true
}

// observe records an event the writer has just encoded.
func (t *deltaTracker) observe(e session.Event) {
	switch e.Type {
	case session.TypeTurnStart, session.TypeStepStart:
		t.reset()
		return
	case session.TypeAssistantChunk:
	default:
		return
	}
	c, ok := viewChunk(e.Data)
	if !ok {
		return
	}
	key := streamKey{c.turn, c.step, c.index}
	switch string(c.typ) {
	case stream.ChunkBlockStart:
		delete(t.streams, key)
		return
	case stream.ChunkFinish:
		for k, s := range t.streams {
			if k.turn == c.turn && k.step == c.step {
				s.closed = true
			}
		}
		return
	}
	if !c.delta {
		return
	}
	body := c.body
	s := t.streams[key]
	if s == nil || s.closed {
		if t.streams == nil {
			t.streams = map[streamKey]*deltaStream{}
		}
		s = &deltaStream{from: e.Seq, h: sha256.New()}
		t.streams[key] = s
	}
	s.h.Write(body)
	s.n += len(body)
	s.to, s.sum = e.Seq, nil
	t.longest = max(t.longest, s.n)
}

// observeStep primes the tracker with a log read back: the events of its
// last step, so that crash repair's interrupted message is compacted as
// the loop's own would have been.
func (t *deltaTracker) observeStep(events []session.Event) {
	start := len(events)
	for start > 0 {
		if typ := events[start-1].Type; typ == session.TypeStepStart || typ == session.TypeTurnStart {
			break
		}
		start--
	}
	for _, e := range events[start:] {
		t.observe(e)
	}
}

// compact returns data with every long string that repeats one stream's
// deltas emptied, and the references that restore them; refs is nil when
// nothing was compacted (data is then returned as is).
func (t *deltaTracker) compact(e session.Event) (json.RawMessage, []deltaRef) {
	switch e.Type {
	case session.TypeAssistantChunk, session.TypeAssistantMessage, session.TypeToolCall:
	default:
		return e.Data, nil
	}
	if t.longest < compactMinBytes || len(e.Data) < compactMinBytes {
		return e.Data, nil
	}
	type hit struct {
		start, end int // the body, between the quotes
		ref        deltaRef
	}
	var hits []hit
	walkStrings(e.Data, func(path []json.RawMessage, start, end int) {
		n := end - start
		if n < compactMinBytes {
			return
		}
		var sum []byte
		var best *deltaRef
		for k, s := range t.streams {
			if s.n != n || best != nil && best.From < s.from {
				continue
			}
			if sum == nil {
				h := sha256.Sum256(e.Data[start:end])
				sum = h[:]
			}
			// Two blocks with the same text both match; the earliest is
			// taken so that the bytes written never depend on map order.
			if bytes.Equal(sum, s.digest()) {
				best = &deltaRef{Turn: k.turn, Step: k.step, Index: k.index, From: s.from, To: s.to, Bytes: n}
			}
		}
		if best != nil {
			best.Path = append([]json.RawMessage(nil), path...)
			hits = append(hits, hit{start, end, *best})
		}
	})
	if len(hits) == 0 {
		return e.Data, nil
	}
	size := len(e.Data)
	for _, h := range hits {
		size -= h.end - h.start
	}
	out := make([]byte, 0, size)
	refs := make([]deltaRef, len(hits))
	prev := 0
	for i, h := range hits {
		out = append(out, e.Data[prev:h.start]...)
		prev = h.end
		refs[i] = h.ref
	}
	return append(out, e.Data[prev:]...), refs
}

// walkStrings calls visit with the path and body span of every string
// value in the JSON value doc, down to maxRefDepth. Values under a key
// that is not plain ASCII without escapes are skipped, so every path is
// exactly its keys' bytes.
func walkStrings(doc []byte, visit func(path []json.RawMessage, start, end int)) {
	var path []json.RawMessage
	var walk func(i int) (int, bool)
	walk = func(i int) (int, bool) {
		switch {
		case i >= len(doc):
			return i, false
		case doc[i] == '"':
			end, _, ok := jsonscan.String(doc, i)
			if ok {
				visit(path, i+1, end-1)
			}
			return end, ok
		case len(path) >= maxRefDepth || doc[i] != '{' && doc[i] != '[':
			return jsonscan.Value(doc, i)
		case doc[i] == '{':
			return jsonscan.Object(doc, i, func(key []byte, flags jsonscan.StrFlags, v int) (int, bool) {
				if !flags.Plain() {
					return jsonscan.Value(doc, v)
				}
				path = append(path, quoted(key))
				end, ok := walk(v)
				path = path[:len(path)-1]
				return end, ok
			})
		default:
			n := 0
			return jsonscan.Array(doc, i, func(v int) (int, bool) {
				path = append(path, json.RawMessage(strconv.Itoa(n)))
				n++
				end, ok := walk(v)
				path = path[:len(path)-1]
				return end, ok
			})
		}
	}
	walk(jsonscan.SkipSpace(doc, 0))
}

func quoted(key []byte) json.RawMessage {
	q := make([]byte, 0, len(key)+2)
	q = append(q, '"')
	q = append(q, key...)
	return append(q, '"')
}

// appendRefs appends the deltaRefs key to an encoded event line.
func appendRefs(line []byte, refs []deltaRef) ([]byte, error) {
	raw, err := session.Marshal(refs)
	if err != nil {
		return nil, err
	}
	line = append(line[:len(line)-1], `,"deltaRefs":`...)
	line = append(line, raw...)
	return append(line, '}'), nil
}
