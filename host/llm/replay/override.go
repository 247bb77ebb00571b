package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/seed-e9b4dba4/dsh/host/llm"
)

// override is the parsed override file: either a whole replacement script
// or positional patches over the derived one.
type override struct {
	file    string
	replace []entry
	patches []patch // sorted by call index
}

type patch struct {
	at    int
	entry entry
}

type entryJSON struct {
	Kind      string             `json:"kind"`
	Chunks    *[]json.RawMessage `json:"chunks"`
	Message   *string            `json:"message"`
	Code      *string            `json:"code"`
	ReadyFile *string            `json:"readyFile"`
}

// readOverride parses the override file strictly: unknown keys, missing or
// extra fields for a kind, and unknown chunk types are errors.
func readOverride(file string) (*override, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("replay override: %w", err)
	}
	bad := func(where, format string, args ...any) error {
		return fmt.Errorf("replay override %s: %s: %s", file, where, fmt.Sprintf(format, args...))
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, bad("document", "%v", err)
		}
		o := &override{file: file, replace: []entry{}}
		for i, r := range list {
			e, err := parseEntry(r)
			if err != nil {
				return nil, bad(fmt.Sprintf("entry %d", i), "%v", err)
			}
			o.replace = append(o.replace, e)
		}
		return o, nil
	}
	var doc struct {
		Patches *[]struct {
			At    *int            `json:"at"`
			Entry json.RawMessage `json:"entry"`
		} `json:"patches"`
	}
	if err := strictUnmarshal(trimmed, &doc); err != nil || doc.Patches == nil {
		return nil, bad("document", "must be an array of entries or {\"patches\":[{\"at\":N,\"entry\":{...}}]}")
	}
	o := &override{file: file}
	seen := map[int]bool{}
	for i, p := range *doc.Patches {
		where := fmt.Sprintf("patch %d", i)
		if p.At == nil || *p.At < 0 {
			return nil, bad(where, "at must be a non-negative call index")
		}
		if seen[*p.At] {
			return nil, bad(where, "call index %d is patched twice", *p.At)
		}
		seen[*p.At] = true
		e, err := parseEntry(p.Entry)
		if err != nil {
			return nil, bad(where, "%v", err)
		}
		o.patches = append(o.patches, patch{at: *p.At, entry: e})
	}
	sort.Slice(o.patches, func(i, j int) bool { return o.patches[i].at < o.patches[j].at })
	return o, nil
}

func parseEntry(raw json.RawMessage) (entry, error) {
	var j entryJSON
	if err := strictUnmarshal(raw, &j); err != nil {
		return entry{}, err
	}
	e := entry{kind: j.Kind}
	switch j.Kind {
	case kindChunks, kindThrow:
		if j.Chunks == nil || j.ReadyFile != nil {
			return entry{}, fmt.Errorf("a %s entry has chunks and no readyFile", j.Kind)
		}
		if j.Kind == kindChunks && (j.Message != nil || j.Code != nil) {
			return entry{}, errors.New("a chunks entry has no message or code")
		}
		if j.Kind == kindThrow {
			if j.Message == nil || *j.Message == "" || j.Code == nil || *j.Code == "" {
				return entry{}, errors.New("a throw entry needs a non-empty message and code")
			}
			e.message, e.code = *j.Message, *j.Code
		}
		for i, r := range *j.Chunks {
			var c llm.Chunk
			if err := json.Unmarshal(r, &c); err != nil {
				return entry{}, fmt.Errorf("chunk %d: %w", i, err)
			}
			e.chunks = append(e.chunks, c)
		}
	case kindHang:
		if j.Chunks != nil || j.Message != nil || j.Code != nil {
			return entry{}, errors.New("a hang entry has only an optional readyFile")
		}
		if j.ReadyFile != nil {
			if *j.ReadyFile == "" {
				return entry{}, errors.New("readyFile must not be empty")
			}
			e.readyFile = *j.ReadyFile
		}
	default:
		return entry{}, fmt.Errorf("unknown kind %q (want chunks, throw or hang)", j.Kind)
	}
	if err := checkPlaceholders(e); err != nil {
		return entry{}, err
	}
	return e, nil
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// apply returns the primary script after the override: a replacement, or
// the derived script with patches swapped in (an index one past the end
// appends).
func (o *override) apply(derived []entry) ([]entry, error) {
	if o.replace != nil {
		return o.replace, nil
	}
	out := append([]entry(nil), derived...)
	for _, p := range o.patches {
		switch {
		case p.at < len(out):
			out[p.at] = p.entry
		case p.at == len(out):
			out = append(out, p.entry)
		default:
			return nil, fmt.Errorf("replay override %s: patch index %d is out of range: the script has %d model call(s), so the next index to append is %d",
				o.file, p.at, len(out), len(out))
		}
	}
	return out, nil
}
