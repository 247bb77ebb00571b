package openai

import (
	"io"
	"time"
)

// watchdog cancels a call when one read stays outstanding longer than
// timeout. It is armed only while a read is pending (waiting for response
// headers or for body bytes), so time the caller spends consuming chunks
// never counts, and every completed read — event data or an SSE comment —
// starts the next wait from zero. Used by one goroutine at a time.
type watchdog struct {
	timeout time.Duration
	fire    func()
	timer   *time.Timer
}

func (w *watchdog) arm() {
	if w.timer == nil {
		w.timer = time.AfterFunc(w.timeout, w.fire)
		return
	}
	w.timer.Reset(w.timeout)
}

func (w *watchdog) disarm() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// watchedBody arms the watchdog around every read of the response body.
type watchedBody struct {
	io.ReadCloser
	wd *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	b.wd.arm()
	n, err := b.ReadCloser.Read(p)
	b.wd.disarm()
	return n, err
}
