package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

var (
	errIdle           = errors.New("stream idle timeout")
	errStalled        = errors.New("stream sent only keep-alives")
	errRequestTimeout = errors.New("request timeout")
)

// Stream sends req and yields its translated chunks. It returns nil after a
// finish chunk (which may itself report an error finish), a *llm.Error for a
// provider failure, the caller's cancellation as an error matching
// context.Canceled, or the error yield returned.
func (p *Provider) Stream(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
	key, err := p.apiKey()
	if err != nil {
		return err
	}
	body, err := p.body(req)
	if err != nil {
		return err
	}
	if err := p.fitsContext(req.Config.Model, body); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return p.aborted(ctx)
	}

	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sctx, stop := context.WithTimeoutCause(sctx, p.cfg.RequestTimeout, errRequestTimeout)
	defer stop()
	wd := &watchdog{timeout: p.cfg.StreamIdleTimeout, fire: func() { cancel(errIdle) }}
	defer wd.disarm()

	hreq, err := http.NewRequestWithContext(sctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return &llm.Error{Failure: session.Failure{Code: llm.CodeTransport,
			Message: fmt.Sprintf("%s API request to %s failed: %v", p.display, p.base, err)}, Cause: err}
	}
	hreq.Header.Set("Authorization", "Bearer "+key)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("User-Agent", "dsh/"+p.cfg.Version)

	wd.arm()
	resp, err := p.client.Do(hreq)
	wd.disarm()
	if err != nil {
		return p.failure(ctx, sctx, err, "request to")
	}
	defer resp.Body.Close()
	resp.Body = watchedBody{resp.Body, wd}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := p.httpError(resp)
		if sctx.Err() != nil {
			return p.failure(ctx, sctx, sctx.Err(), "request to")
		}
		return e
	}
	if resp.StatusCode == http.StatusNoContent || resp.ContentLength == 0 {
		return llm.Failf(llm.CodeEmptyResponse, "%s API returned no response body", p.display)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		return p.notAStream(resp)
	}

	stalled := &watchdog{timeout: p.cfg.KeepAliveLimit, fire: func() { cancel(errStalled) }}
	defer stalled.disarm()
	return p.read(ctx, sctx, resp.Body, stalled, outputByteLimit(req), yield)
}

// outputByteLimit is the most text, reasoning and tool-call argument bytes
// a call may stream: sixteen bytes for every token of its max_tokens (or of
// DefaultOutputTokenCap), far above what a tokenizer produces, so only a
// server that ignores max_tokens reaches it.
func outputByteLimit(req llm.Request) int {
	tokens := DefaultOutputTokenCap
	if req.Config.MaxTokens != nil && *req.Config.MaxTokens > 0 {
		tokens = *req.Config.MaxTokens
	}
	return 16 * tokens
}

// fitsContext refuses a request whose estimated size exceeds the model's
// context window before it is sent: four bytes a token, the agent loop's
// estimate. The code is the one a provider's own refusal maps to, so the
// loop's compaction can repair it.
func (p *Provider) fitsContext(model string, body []byte) error {
	window := p.Model(model).ContextWindow
	if window <= 0 {
		return nil
	}
	if est := (len(body) + 3) / 4; est > window {
		return llm.Failf(llm.CodeContextExceeded,
			"the request to %s is about %d tokens (%d bytes), more than the %d-token context window of %s; shorten the prompt or attach less, or start a new session",
			p.display, est, len(body), window, model)
	}
	return nil
}

// read translates the event stream until [DONE]. Buffered events are not
// delivered once the call is cancelled or timed out. stalled is armed while
// waiting for an event with data, so keep-alive comments cannot hold the
// call open past its limit; the time yield takes does not count.
func (p *Provider) read(ctx, sctx context.Context, body io.Reader, stalled *watchdog, limit int, yield func(llm.Chunk) error) error {
	tr := &translator{display: p.display, emit: yield, outputLimit: limit}
	r := newSSEReader(body)
	for {
		if sctx.Err() != nil {
			return p.failure(ctx, sctx, sctx.Err(), "stream from")
		}
		stalled.arm()
		ev, err := r.next()
		stalled.disarm()
		if err != nil {
			if errors.Is(err, bufio.ErrTooLong) && sctx.Err() == nil {
				return &llm.Error{Failure: session.Failure{Code: llm.CodeMalformed, Message: fmt.Sprintf(
					"%s stream line exceeds %d bytes", p.display, maxSSELine)}, Cause: err}
			}
			if sctx.Err() != nil || !errors.Is(err, io.EOF) {
				return p.failure(ctx, sctx, err, "stream from")
			}
			return llm.Failf(llm.CodeStreamClosed, "%s stream ended before [DONE]; the response was cut off", p.display)
		}
		if ev.Data == "[DONE]" {
			return tr.done()
		}
		if err := tr.payload(ev); err != nil {
			if errors.Is(err, errOutputCap) {
				// The server ignored max_tokens: end the answer here as if
				// it had stopped for length, and stop downloading.
				tr.finish = "length"
				return tr.done()
			}
			return err
		}
	}
}

// failure classifies an error from the transport: caller cancellation first,
// then our own deadlines, then a network failure.
func (p *Provider) failure(ctx, sctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return p.aborted(ctx)
	}
	switch context.Cause(sctx) {
	case errIdle:
		return &llm.Error{Failure: session.Failure{Code: llm.CodeTimeout, Message: fmt.Sprintf(
			"%s stream idle timeout after %dms with no data from the server", p.display, p.cfg.StreamIdleTimeout.Milliseconds())}, Cause: err}
	case errStalled:
		return &llm.Error{Failure: session.Failure{Code: llm.CodeTimeout, Message: fmt.Sprintf(
			"%s stream stalled: no data for %dms, only keep-alive comments", p.display, p.cfg.KeepAliveLimit.Milliseconds())}, Cause: err}
	case errRequestTimeout:
		return &llm.Error{Failure: session.Failure{Code: llm.CodeTimeout, Message: fmt.Sprintf(
			"%s request timeout after %dms", p.display, p.cfg.RequestTimeout.Milliseconds())}, Cause: err}
	}
	var uerr *url.Error
	detail := err
	if errors.As(err, &uerr) {
		detail = uerr.Err
	}
	if unreachable(err) {
		return &llm.Error{Failure: session.Failure{Code: llm.CodeUnreachable, Message: fmt.Sprintf(
			"%s API at %s is unreachable: %v; check llm.base_url and the network", p.display, p.base, detail)}, Cause: err}
	}
	return &llm.Error{Failure: session.Failure{Code: llm.CodeTransport, Message: fmt.Sprintf(
		"%s API %s %s failed: %v", p.display, what, p.base, detail)}, Cause: err}
}

// aborted is the error for caller cancellation; it matches ctx.Err() with
// errors.Is so the loop can report an aborted finish.
func (p *Provider) aborted(ctx context.Context) error {
	cause := ctx.Err()
	if c := context.Cause(ctx); c != nil && c != cause {
		cause = fmt.Errorf("%w: %w", cause, c)
	}
	return &llm.Error{Failure: session.Failure{Code: llm.CodeAborted,
		Message: p.display + " request aborted by caller"}, Cause: cause}
}

// notAStream reports a 2xx JSON body: an in-band error object, or a server
// that ignored stream:true.
func (p *Provider) notAStream(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var envelope struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &envelope) == nil {
		if _, ok := parseWireError(envelope.Error); ok {
			return inBandError(p.display, envelope.Error, string(body))
		}
	}
	return llm.Failf(llm.CodeMalformed,
		"%s answered with JSON instead of an event stream; check that %s serves streaming chat completions", p.display, p.base)
}

// unreachable reports a failure that a retry cannot fix: nothing listens at
// the address, or the host name does not exist. A DNS timeout or a temporary
// resolver failure stays transient.
func unreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}
