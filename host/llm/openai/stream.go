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
	"net/http"
	"net/url"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

var (
	errIdle           = errors.New("stream idle timeout")
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
	if ctx.Err() != nil {
		return p.aborted(ctx)
	}

	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if p.cfg.RequestTimeout > 0 {
		var stop context.CancelFunc
		sctx, stop = context.WithTimeoutCause(sctx, p.cfg.RequestTimeout, errRequestTimeout)
		defer stop()
	}
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

	return p.read(ctx, sctx, resp.Body, yield)
}

// read translates the event stream until [DONE]. Buffered events are not
// delivered once the call is cancelled or timed out.
func (p *Provider) read(ctx, sctx context.Context, body io.Reader, yield func(llm.Chunk) error) error {
	tr := &translator{display: p.display, emit: yield}
	r := newSSEReader(body)
	for {
		if sctx.Err() != nil {
			return p.failure(ctx, sctx, sctx.Err(), "stream from")
		}
		ev, err := r.next()
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
	case errRequestTimeout:
		return &llm.Error{Failure: session.Failure{Code: llm.CodeTimeout, Message: fmt.Sprintf(
			"%s request timeout after %dms", p.display, p.cfg.RequestTimeout.Milliseconds())}, Cause: err}
	}
	var uerr *url.Error
	detail := err
	if errors.As(err, &uerr) {
		detail = uerr.Err
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
