package mcp

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressTable remembers the latest progress notification of each running
// call, so a timeout can say how far the server got.
type progressTable struct {
	next atomic.Uint64
	mu   sync.Mutex
	last map[string]string
}

// begin returns a fresh progress token and its release.
func (p *progressTable) begin() (token string, done func()) {
	token = "dsh-" + strconv.FormatUint(p.next.Add(1), 10)
	p.mu.Lock()
	if p.last == nil {
		p.last = map[string]string{}
	}
	p.last[token] = ""
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
	return p.last[token]
}

// handle is the client's progress notification handler.
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
	if _, ok := p.last[token]; ok {
		p.last[token] = text
	}
}
