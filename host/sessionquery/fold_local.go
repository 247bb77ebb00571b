package sessionquery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// replacement is one surface replace: the replacing seq and the positional
// range of nodes it shadowed.
type replacement struct {
	seq        int
	start, end int
	shadowed   []int
}

const maxSafeInteger = 1<<53 - 1

// foldSurface replays a log once, validating the envelope rules of the
// surface and returning the final nodes and every replacement in event
// order. Any violation rejects the whole log.
func foldSurface(events []session.Event) ([]int, []replacement, error) {
	nodes := []int{}
	var reps []replacement
	for i, e := range events {
		if e.Seq != i {
			return nil, nil, fmt.Errorf("session event seq %d is not contiguous; expected %d", e.Seq, i)
		}
		if !session.IsSurfaceType(e.Type) {
			if len(e.SurfaceOp) > 0 {
				return nil, nil, fmt.Errorf("session event %d of type %q must not carry surfaceOp", i, e.Type)
			}
			if len(e.SourceEventSeqs) > 0 {
				return nil, nil, fmt.Errorf("session event %d of type %q must not carry sourceEventSeqs", i, e.Type)
			}
			continue
		}
		op, err := decodeSurfaceOp(e)
		if err != nil {
			return nil, nil, err
		}
		sources, err := decodeSources(e)
		if err != nil {
			return nil, nil, err
		}
		if !op.Replace {
			nodes = append(nodes, i)
			continue
		}
		si, ei := slices.Index(nodes, op.Start), slices.Index(nodes, op.End)
		if si < 0 || ei < 0 || si > ei {
			return nil, nil, fmt.Errorf("session event %d replaces a surface range %d..%d that is not current", i, op.Start, op.End)
		}
		shadowed := slices.Clone(nodes[si : ei+1])
		for _, s := range shadowed {
			if !slices.Contains(sources, s) {
				return nil, nil, fmt.Errorf("session event %d replaces seq %d without citing it in sourceEventSeqs", i, s)
			}
		}
		if e.Type == session.TypeToolResult {
			if err := checkToolResultReplace(events, e, shadowed); err != nil {
				return nil, nil, err
			}
		}
		nodes = slices.Concat(nodes[:si:si], []int{i}, nodes[ei+1:])
		reps = append(reps, replacement{seq: i, start: op.Start, end: op.End, shadowed: shadowed})
	}
	return nodes, reps, nil
}

func decodeSurfaceOp(e session.Event) (session.SurfaceOp, error) {
	if len(e.SurfaceOp) == 0 {
		return session.SurfaceOp{}, fmt.Errorf("session event %d of type %q requires surfaceOp", e.Seq, e.Type)
	}
	var s string
	if json.Unmarshal(e.SurfaceOp, &s) == nil {
		if s == "append" {
			return session.SurfaceOp{}, nil
		}
		return session.SurfaceOp{}, fmt.Errorf("session event %d has unknown surfaceOp %q", e.Seq, s)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(e.SurfaceOp, &obj) != nil || len(obj) != 3 {
		return session.SurfaceOp{}, fmt.Errorf("session event %d has a malformed surfaceOp", e.Seq)
	}
	var kind string
	if json.Unmarshal(obj["op"], &kind) != nil || kind != "replace" {
		return session.SurfaceOp{}, fmt.Errorf("session event %d has a malformed surfaceOp", e.Seq)
	}
	start, ok1 := safeIndex(obj["start"])
	end, ok2 := safeIndex(obj["end"])
	if !ok1 || !ok2 {
		return session.SurfaceOp{}, fmt.Errorf("session event %d has a malformed surfaceOp", e.Seq)
	}
	return session.SurfaceOp{Replace: true, Start: start, End: end}, nil
}

func decodeSources(e session.Event) ([]int, error) {
	if len(e.SourceEventSeqs) == 0 {
		return nil, nil
	}
	var raw []json.RawMessage
	if json.Unmarshal(e.SourceEventSeqs, &raw) != nil || raw == nil {
		return nil, fmt.Errorf("session event %d sourceEventSeqs must be an array", e.Seq)
	}
	if len(raw) == 0 && e.Type != session.TypeAssistantMessage {
		return nil, fmt.Errorf("session event %d sourceEventSeqs must not be empty", e.Seq)
	}
	out := make([]int, 0, len(raw))
	for _, r := range raw {
		n, ok := safeIndex(r)
		if !ok {
			return nil, fmt.Errorf("session event %d sourceEventSeqs must contain non-negative integers", e.Seq)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("session event %d sourceEventSeqs contains duplicate seq %d", e.Seq, n)
		}
		if n >= e.Seq {
			return nil, fmt.Errorf("session event %d sourceEventSeqs cites later seq %d", e.Seq, n)
		}
		out = append(out, n)
	}
	return out, nil
}

func safeIndex(raw json.RawMessage) (int, bool) {
	var f float64
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &f) != nil {
		return 0, false
	}
	if f < 0 || f > maxSafeInteger || f != float64(int64(f)) {
		return 0, false
	}
	return int(f), true
}

// checkToolResultReplace enforces that a tool/result replacement rewrites
// only the inner content of exactly one tool/result node.
func checkToolResultReplace(events []session.Event, e session.Event, shadowed []int) error {
	if len(shadowed) != 1 || events[shadowed[0]].Type != session.TypeToolResult {
		return fmt.Errorf("session event %d: a tool/result replacement must shadow exactly one tool/result", e.Seq)
	}
	a, errA := withoutInnerContent(events[shadowed[0]].Data)
	b, errB := withoutInnerContent(e.Data)
	if err := errors.Join(errA, errB); err != nil {
		return fmt.Errorf("session event %d: %w", e.Seq, err)
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("session event %d: a tool/result replacement may change only the result content", e.Seq)
	}
	return nil
}

func withoutInnerContent(data json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("tool/result data: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		if msg, ok := m["message"].(map[string]any); ok {
			if content, ok := msg["content"].([]any); ok && len(content) > 0 {
				if first, ok := content[0].(map[string]any); ok {
					delete(first, "content")
				}
			}
		}
	}
	return v, nil
}
