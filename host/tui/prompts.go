package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// The prompt history (Up and Down in the input) outlives the process: every
// prompt sent is appended to a JSON-lines file in the dsh home, and a new UI
// starts with the prompts sent before in the same workspace. The file is
// private (0600: prompts may hold anything), bounded (prompts over
// maxPromptBytes are not kept, and once it outgrows maxHistoryBytes it is
// rewritten with its newest keepPrompts entries) and never required: a
// missing or damaged file only costs the old prompts.

const (
	maxPromptBytes  = 16 << 10
	maxHistoryBytes = 1 << 20
	keepPrompts     = 1000
	// maxRecalled is how many earlier prompts a UI starts with.
	maxRecalled = 500
)

// promptRecord is one line of the history file.
type promptRecord struct {
	Cwd  string `json:"cwd"`
	Text string `json:"text"`
}

// promptHistory appends to and reads the history file. Lines are queued
// in the order they were sent (on the UI goroutine) and written by flush
// (in the background), so a slow disk never stalls the UI and the file
// keeps their order.
type promptHistory struct {
	path string
	mu   sync.Mutex // the file

	qmu     sync.Mutex
	pending []promptRecord
}

// enqueue queues a line sent in cwd for the next flush.
func (h *promptHistory) enqueue(cwd, text string) {
	if h == nil || h.path == "" || len(text) > maxPromptBytes {
		return
	}
	h.qmu.Lock()
	h.pending = append(h.pending, promptRecord{Cwd: cwd, Text: text})
	h.qmu.Unlock()
}

// flush appends the queued lines to the file.
func (h *promptHistory) flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.qmu.Lock()
	recs := h.pending
	h.pending = nil
	h.qmu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	return h.append(recs)
}

// recall returns the prompts sent in workspace ws (session.Workspace's
// rule, as for its sessions), oldest first, at most maxRecalled, without
// repeating a prompt right after itself.
func (h *promptHistory) recall(ws session.Workspace) ([]string, error) {
	if h == nil || h.path == "" {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	recs, err := h.read()
	var out []string
	for _, r := range recs {
		if ws.Holds(&r.Cwd) && (len(out) == 0 || out[len(out)-1] != r.Text) {
			out = append(out, r.Text)
		}
	}
	if len(out) > maxRecalled {
		out = out[len(out)-maxRecalled:]
	}
	return out, err
}

// read parses the file's last maxHistoryBytes; damaged lines are skipped.
func (h *promptHistory) read() ([]promptRecord, error) {
	f, err := os.Open(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxHistoryBytes {
		if _, err := f.Seek(st.Size()-maxHistoryBytes, io.SeekStart); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHistoryBytes))
	if err != nil {
		return nil, err
	}
	var recs []promptRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxHistoryBytes)
	for sc.Scan() {
		var r promptRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// append writes recs at the end of the file and keeps it bounded; the
// caller holds h.mu.
func (h *promptHistory) append(recs []promptRecord) error {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(b.Bytes())
	st, serr := f.Stat()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		return err
	}
	if st.Size() > maxHistoryBytes {
		return h.trim()
	}
	return nil
}

// trim rewrites the file with its newest records (at most keepPrompts and
// half of maxHistoryBytes), replacing it in one rename so a reader never
// sees half of it.
func (h *promptHistory) trim() error {
	recs, err := h.read()
	if err != nil {
		return err
	}
	if len(recs) > keepPrompts {
		recs = recs[len(recs)-keepPrompts:]
	}
	// Keep at most half the bound, so the next trim is far away.
	var lines [][]byte
	size := 0
	for i := len(recs) - 1; i >= 0; i-- {
		line, err := json.Marshal(recs[i])
		if err != nil {
			return err
		}
		if size+len(line)+1 > maxHistoryBytes/2 {
			break
		}
		size += len(line) + 1
		lines = append(lines, line)
	}
	var b bytes.Buffer
	for i := len(lines) - 1; i >= 0; i-- {
		b.Write(append(lines[i], '\n'))
	}
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".prompt-history-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b.Bytes())
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), h.path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
