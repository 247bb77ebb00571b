package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/jsonscan"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// RestoreDeltas returns e's data with the strings its deltaRefs (raw) stand
// for put back (see deltas.go). prior holds the log's events before e,
// indexed by seq. The store's reader calls it for every line carrying
// deltaRefs; a reader of logs of its own (the replay provider's fixtures)
// must call it too. The
// restored event obeys the same MaxEventBytes limit as any line, so
// restoring one costs at most that much memory, allocated once.
func RestoreDeltas(prior []session.Event, e session.Event, raw json.RawMessage) (json.RawMessage, error) {
	return restoreDeltas(prior, 0, e, raw)
}

// restoreDeltas is RestoreDeltas where prior holds only the events from
// seq base on. The events before base count as holding no deltas, so a
// reference that needs any of them fails on its byte count, and one
// whose deltas all come later restores as from the whole log.
func restoreDeltas(prior []session.Event, base int, e session.Event, raw json.RawMessage) (json.RawMessage, error) {
	var refs []deltaRef
	if !isArray(raw) || json.Unmarshal(raw, &refs) != nil || len(refs) == 0 {
		return nil, errors.New("deltaRefs must be a non-empty array of references")
	}
	type splice struct {
		at  int // the closing quote of the empty string to fill
		ref deltaRef
	}
	splices := make([]splice, len(refs))
	size := len(e.Data)
	for i, r := range refs {
		switch {
		case r.From < 0 || r.From > r.To || r.To >= e.Seq:
			return nil, fmt.Errorf("deltaRefs[%d]: seqs %d..%d are not before this event", i, r.From, r.To)
		case r.To-base >= len(prior):
			return nil, fmt.Errorf("deltaRefs[%d]: seq %d was not read", i, r.To)
		case r.Bytes <= 0 || r.Bytes > MaxEventBytes-size:
			return nil, fmt.Errorf("deltaRefs[%d]: the restored event would be larger than the %d MiB limit", i, MaxEventBytes>>20)
		}
		size += r.Bytes
		start, end, ok := locate(e.Data, r.Path)
		if !ok || end-start != 2 {
			return nil, fmt.Errorf("deltaRefs[%d]: path %s does not name an empty string in data", i, pathText(r.Path))
		}
		splices[i] = splice{start + 1, r}
	}
	slices.SortFunc(splices, func(a, b splice) int { return a.at - b.at })
	out := make([]byte, 0, size)
	prev := 0
	for i, s := range splices {
		if i > 0 && s.at == splices[i-1].at {
			return nil, fmt.Errorf("deltaRefs: two references fill the string at %s", pathText(s.ref.Path))
		}
		out = append(out, e.Data[prev:s.at]...)
		prev = s.at
		before := len(out)
		var err error
		covered := prior[max(s.ref.From-base, 0):max(s.ref.To-base+1, 0)]
		if out, err = appendDeltas(out, covered, s.ref); err != nil {
			return nil, err
		}
		if got := len(out) - before; got != s.ref.Bytes {
			return nil, fmt.Errorf("deltaRefs: the deltas of block %d in seqs %d..%d hold %d bytes, not %d",
				s.ref.Index, s.ref.From, s.ref.To, got, s.ref.Bytes)
		}
	}
	return append(out, e.Data[prev:]...), nil
}

// appendDeltas appends the encoded bodies of the deltas r covers (the
// events from r.From to r.To), never more than r.Bytes of them.
func appendDeltas(dst []byte, covered []session.Event, r deltaRef) ([]byte, error) {
	n := 0
	for _, p := range covered {
		if p.Type != session.TypeAssistantChunk {
			continue
		}
		c, ok := viewChunk(p.Data)
		if !ok || !c.delta || c.turn != r.Turn || c.step != r.Step || c.index != r.Index {
			continue
		}
		body := c.body
		if n += len(body); n > r.Bytes {
			return nil, fmt.Errorf("deltaRefs: the deltas of block %d in seqs %d..%d hold more than %d bytes",
				r.Index, r.From, r.To, r.Bytes)
		}
		dst = append(dst, body...)
	}
	return dst, nil
}

// locate finds the string token at path in doc: start indexes its opening
// quote and end is just past its closing one.
func locate(doc []byte, path []json.RawMessage) (start, end int, ok bool) {
	i := jsonscan.SkipSpace(doc, 0)
	for _, elem := range path {
		if i >= len(doc) {
			return 0, 0, false
		}
		var next int
		found := false
		switch {
		case doc[i] == '{' && len(elem) >= 2 && elem[0] == '"':
			key := elem[1 : len(elem)-1]
			_, ok = jsonscan.Object(doc, i, func(k []byte, flags jsonscan.StrFlags, v int) (int, bool) {
				if flags.Plain() && bytes.Equal(k, key) {
					if found {
						return v, false // a duplicate key: encoding/json would take the last
					}
					found, next = true, v
				}
				return jsonscan.Value(doc, v)
			})
		case doc[i] == '[':
			want, isInt := jsonscan.Int(elem)
			if !isInt {
				return 0, 0, false
			}
			n := int64(0)
			_, ok = jsonscan.Array(doc, i, func(v int) (int, bool) {
				if n == want {
					found, next = true, v
				}
				n++
				return jsonscan.Value(doc, v)
			})
		default:
			return 0, 0, false
		}
		if !ok || !found {
			return 0, 0, false
		}
		i = next
	}
	if i >= len(doc) || doc[i] != '"' {
		return 0, 0, false
	}
	end, _, ok = jsonscan.String(doc, i)
	return i, end, ok
}

func pathText(path []json.RawMessage) string {
	raw, err := session.Marshal(path)
	if err != nil {
		return "(unprintable path)"
	}
	return string(raw)
}

func isArray(raw json.RawMessage) bool {
	i := jsonscan.SkipSpace(raw, 0)
	return i < len(raw) && raw[i] == '['
}
