package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// fixtureLog is what replay needs from one session log: the header facts
// that order scripts and the events after the fork seed.
type fixtureLog struct {
	file      string
	id        string
	createdAt int64
	events    []fixtureEvent
}

// fixtureEvent is one logged event. Chunk events are decoded up front so a
// malformed chunk is reported with its line.
type fixtureEvent struct {
	Type       string
	Data       json.RawMessage
	Turn, Step int
	Chunk      *llm.Chunk // assistant/chunk only
}

// expandFixtures turns the configured paths into log files: a directory
// contributes session.jsonl then session.<n>.jsonl in numeric order.
func expandFixtures(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("replay fixture %s does not exist; record the scenario or fix the fixture path", p)
			}
			return nil, fmt.Errorf("replay fixture: %w", err)
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		dirFiles, err := scenarioFiles(p)
		if err != nil {
			return nil, err
		}
		files = append(files, dirFiles...)
	}
	if len(files) == 0 {
		return nil, errors.New("replay needs at least one fixture session log")
	}
	return files, nil
}

var childLog = lazyregexp.New(`^session\.([0-9]+)\.jsonl$`)

func scenarioFiles(dir string) ([]string, error) {
	primary := filepath.Join(dir, "session.jsonl")
	if _, err := os.Stat(primary); err != nil {
		return nil, fmt.Errorf("replay fixture directory %s has no session.jsonl", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("replay fixture: %w", err)
	}
	type child struct {
		n    int
		name string
	}
	var children []child
	for _, e := range entries {
		if m := childLog.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
			n, _ := strconv.Atoi(m[1])
			children = append(children, child{n, e.Name()})
		}
	}
	sort.Slice(children, func(i, j int) bool { return children[i].n < children[j].n })
	files := []string{primary}
	for _, c := range children {
		files = append(files, filepath.Join(dir, c.name))
	}
	return files, nil
}

// readFixture reads one session log tolerantly: blank lines are skipped,
// envelopes may be projected away (no seq/time), packed chunk rows expand to
// their member events, and a torn final line (a crash mid-append) is
// ignored. Anything else malformed is an error naming the line.
func readFixture(file string) (*fixtureLog, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("replay fixture %s does not exist; record the scenario or fix the fixture path", file)
		}
		return nil, fmt.Errorf("replay fixture: %w", err)
	}
	lines := bytes.Split(raw, []byte("\n"))
	log := &fixtureLog{file: file}
	var header struct {
		Type       string `json:"type"`
		ID         string `json:"id"`
		CreatedAt  int64  `json:"createdAt"`
		SeedLength int    `json:"seedLength"`
	}
	seenHeader := false
	// prior is the log so far, as store.RestoreDeltas reads it.
	var prior []session.Event
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		torn := i == len(lines)-1 // the file does not end with a newline here
		if !seenHeader {
			if err := json.Unmarshal(line, &header); err != nil || header.Type != "session" {
				return nil, fmt.Errorf("replay fixture %s: line %d is not a session header", file, i+1)
			}
			seenHeader = true
			log.id, log.createdAt = header.ID, header.CreatedAt
			continue
		}
		events, err := decodeLine(line, prior)
		if err != nil {
			if torn {
				break
			}
			return nil, fmt.Errorf("replay fixture %s: line %d: %w", file, i+1, err)
		}
		log.events = append(log.events, events...)
		for _, e := range events {
			prior = append(prior, session.Event{Type: e.Type, Seq: len(prior), Data: e.Data})
		}
	}
	if !seenHeader {
		return nil, fmt.Errorf("replay fixture %s is empty; it needs a session header line", file)
	}
	if header.SeedLength > 0 {
		// Seeded events are the parent's history, not calls this session made.
		log.events = log.events[min(header.SeedLength, len(log.events)):]
	}
	return log, nil
}

type packedRow struct {
	Type string `json:"type"`
	Data struct {
		Turn  *int     `json:"turn"`
		Step  *int     `json:"step"`
		Index *int     `json:"index"`
		DT    []int64  `json:"dt"`
		Texts []string `json:"texts"`
		ID    *string  `json:"id"`
		Name  *string  `json:"name"`
		Args  []string `json:"args"`
	} `json:"data"`
}

// decodeLine decodes one line; prior holds the events before it, from
// which a line's deltaRefs (long strings stored once, as their deltas) are
// restored.
func decodeLine(line []byte, prior []session.Event) ([]fixtureEvent, error) {
	var env struct {
		Type      string          `json:"type"`
		Data      json.RawMessage `json:"data"`
		DeltaRefs json.RawMessage `json:"deltaRefs"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, errors.New("invalid JSON")
	}
	if len(env.DeltaRefs) > 0 && string(env.DeltaRefs) != "null" {
		data, err := store.RestoreDeltas(prior, session.Event{Type: env.Type, Seq: len(prior), Data: env.Data}, env.DeltaRefs)
		if err != nil {
			return nil, err
		}
		env.Data = data
	}
	switch env.Type {
	case "text-chunks", "reasoning-chunks", "tool-call-chunks":
		return expandRow(line)
	case "":
		return nil, errors.New("record has no type")
	case "assistant/chunk":
		var d struct {
			Turn  int        `json:"turn"`
			Step  int        `json:"step"`
			Chunk *llm.Chunk `json:"chunk"`
		}
		if err := json.Unmarshal(env.Data, &d); err != nil {
			return nil, fmt.Errorf("assistant/chunk: %w", err)
		}
		if d.Chunk == nil {
			return nil, errors.New("assistant/chunk has no chunk")
		}
		return []fixtureEvent{{Type: env.Type, Data: env.Data, Turn: d.Turn, Step: d.Step, Chunk: d.Chunk}}, nil
	}
	return []fixtureEvent{{Type: env.Type, Data: env.Data}}, nil
}

// expandRow decodes a packed run of same-block deltas back into one
// assistant/chunk event per member.
func expandRow(line []byte) ([]fixtureEvent, error) {
	var row packedRow
	if err := json.Unmarshal(line, &row); err != nil {
		return nil, fmt.Errorf("malformed %s row: %w", rowType(line), err)
	}
	d := row.Data
	if d.Turn == nil || d.Step == nil || d.Index == nil {
		return nil, fmt.Errorf("malformed %s row: turn, step and index are required", row.Type)
	}
	members, kind := d.Texts, llm.ChunkTextDelta
	switch row.Type {
	case "reasoning-chunks":
		kind = llm.ChunkReasoningDelta
	case "tool-call-chunks":
		members, kind = d.Args, llm.ChunkToolCallDelta
		if d.ID == nil {
			return nil, fmt.Errorf("malformed %s row: id is required", row.Type)
		}
	}
	if len(members) == 0 || len(d.DT) != len(members)-1 {
		return nil, fmt.Errorf("malformed %s row: %d members need %d dt gaps, got %d",
			row.Type, len(members), max(len(members)-1, 0), len(d.DT))
	}
	out := make([]fixtureEvent, len(members))
	for i, m := range members {
		c := llm.Chunk{Type: kind, Index: *d.Index}
		if kind == llm.ChunkToolCallDelta {
			c.ID, c.ArgumentsDelta = *d.ID, m
			if d.Name != nil {
				c.Name = *d.Name
			}
		} else {
			c.Delta = m
		}
		out[i] = fixtureEvent{Type: "assistant/chunk", Turn: *d.Turn, Step: *d.Step, Chunk: &c}
	}
	return out, nil
}

func rowType(line []byte) string {
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(line, &v)
	return v.Type
}
