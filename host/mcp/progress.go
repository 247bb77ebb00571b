package mcp

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressTable remembers the latest progress notification of each running
// call, so a timeout can say how far the server got, and passes each one on
// to the call's live output (tools.LiveOutput), so the tool card shows it
// while the call runs.
type progressTable struct {
	next atomic.Uint64
	mu   sync.Mutex
	last map[string]*progress
}

type progress struct {
	text string
	live io.Writer // nil: the front end shows no live output
}

// begin returns a fresh progress token and its release; live (nil for
// none) receives one line per notification until the release.
func (p *progressTable) begin(live io.Writer) (token string, done func()) {
	token = "dsh-" + strconv.FormatUint(p.next.Add(1), 10)
	p.mu.Lock()
	if p.last == nil {
		p.last = map[string]*progress{}
	}
	p.last[token] = &progress{live: live}
	p.mu.Unlock()
	return token, func() {
		p.mu.Lock()
		delete(p.last, token)
		p.mu.Unlock()
	}
}

func (p *progressTable) get(token string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.last[token]; e != nil {
		return e.text
	}
	return ""
}

// handle is the client's progress notification handler. A notification
// for a call that already ended (the SDK may run the handler after the
// response arrived) is dropped.
func (p *progressTable) handle(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	token := fmt.Sprint(req.Params.ProgressToken)
	text := strconv.FormatFloat(req.Params.Progress, 'f', -1, 64)
	if req.Params.Total > 0 {
		text += "/" + strconv.FormatFloat(req.Params.Total, 'f', -1, 64)
	}
	if req.Params.Message != "" {
		text += " " + oneLine(req.Params.Message, 200)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.last[token]
	if e == nil {
		return
	}
	e.text = text
	if e.live != nil {
		// Under the lock, so the writer sees one notification at a time
		// and none after the release; a live writer never blocks.
		_, _ = io.WriteString(e.live, "progress "+text+"\n")
	}
}
