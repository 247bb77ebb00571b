package compositions

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"time"
)

// LastActivity returns the time of session id's last event: from the live
// log when this runtime drives the session, else from the last complete
// line of its persisted log, read from the end of the file so that listing
// stays cheap for long sessions. It reports false for a session without
// events or whose log cannot be read.
func (r *Runtime) LastActivity(ctx context.Context, id string) (time.Time, bool) {
	if a, ok := r.Agent(id); ok {
		live := a.Session()
		if n := live.Len(); n > 0 {
			if evs := live.Events(n - 1); len(evs) > 0 {
				return time.UnixMilli(evs[len(evs)-1].Time), true
			}
		}
		return time.Time{}, false
	}
	entry, err := r.Store.Stat(ctx, id)
	if err != nil {
		return time.Time{}, false
	}
	ms, ok := lastEventTime(entry.Path)
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// tailWindow is the first read from the end of a log; it doubles until it
// holds the last complete line, up to maxTail.
const (
	tailWindow = 16 << 10
	maxTail    = 64 << 20
)

// lastEventTime reads the "time" of the last complete line of a JSONL log.
// The header line has none, so a log without events reports false.
func lastEventTime(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	size := fi.Size()
	for window := int64(tailWindow); ; window *= 2 {
		start := max(0, size-window)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return 0, false
		}
		// Bytes after the last newline are a write in progress.
		end := bytes.LastIndexByte(buf, '\n')
		if end < 0 {
			if start == 0 || window >= maxTail {
				return 0, false
			}
			continue
		}
		lineStart := bytes.LastIndexByte(buf[:end], '\n') + 1
		if lineStart == 0 && start > 0 {
			if window >= maxTail {
				return 0, false
			}
			continue // the line begins before the window
		}
		var e struct {
			Time *int64 `json:"time"`
		}
		if json.Unmarshal(buf[lineStart:end], &e) != nil || e.Time == nil {
			return 0, false
		}
		return *e.Time, true
	}
}
