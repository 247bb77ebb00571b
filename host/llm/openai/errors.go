package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// wireError is the error object of an error response or in-band error. Some
// gateways send a bare string instead of an object.
type wireError struct {
	Message string
	Code    string
	Type    string
}

func parseWireError(raw json.RawMessage) (wireError, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return wireError{}, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return wireError{Message: s}, s != ""
	}
	var v struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return wireError{}, false
	}
	// Codes are strings on OpenAI and numbers on some gateways.
	code := strings.Trim(string(v.Code), `"`)
	if code == "null" {
		code = ""
	}
	return wireError{Message: v.Message, Code: code, Type: v.Type}, true
}

func (e wireError) detail() string {
	var parts []string
	for _, s := range []string{e.Code, e.Type, e.Message} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// httpError turns a non-2xx response into a typed failure.
func (p *Provider) httpError(resp *http.Response) *llm.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := fmt.Sprintf("%s API error (HTTP %d)", p.display, resp.StatusCode)
	var envelope struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	var we wireError
	if json.Unmarshal(body, &envelope) == nil {
		if e, ok := parseWireError(envelope.Error); ok {
			we = e
		} else if envelope.Message != "" {
			we = wireError{Message: envelope.Message}
		}
	}
	if we.Message != "" {
		msg = we.Message
	}
	f := session.Failure{
		Message:   msg,
		Code:      statusCode(resp.StatusCode, we.detail()),
		Status:    resp.StatusCode,
		RequestID: requestID(resp.Header),
	}
	if ms, ok := retryAfterMs(resp.Header.Get("Retry-After"), p.cfg.Now()); ok {
		f.ProviderRetryAfterMs = ms
	}
	return &llm.Error{Failure: f}
}

// statusCode classifies an HTTP failure. Quota exhaustion is terminal and
// wins over the transient 429 class; context overflow is split from other
// bad requests because compaction can repair it.
func statusCode(status int, detail string) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.CodeAuth
	case status == http.StatusRequestEntityTooLarge:
		return llm.CodeInvalidRequest
	case isQuotaExceeded(detail):
		return llm.CodeQuota
	case status == http.StatusTooManyRequests:
		return llm.CodeRateLimit
	case status == http.StatusBadRequest && isContextOverflow(detail):
		return llm.CodeContextExceeded
	case status == http.StatusBadRequest:
		return llm.CodeInvalidRequest
	case status >= 500:
		return llm.CodeServer
	default:
		return "HTTP_" + strconv.Itoa(status)
	}
}

// inBandError reports an error object sent inside a 200 event stream
// (gateways do this when an upstream provider fails mid-stream).
func inBandError(display string, raw json.RawMessage, data string) *llm.Error {
	we, _ := parseWireError(raw)
	msg := we.Message
	if msg == "" {
		msg = display + " stream reported an error: " + clip(data, 200)
	}
	code := llm.CodeServer
	switch d := we.detail(); {
	case isQuotaExceeded(d):
		code = llm.CodeQuota
	case isContextOverflow(d):
		code = llm.CodeContextExceeded
	}
	return &llm.Error{Failure: session.Failure{Code: code, Message: msg}}
}

func requestID(h http.Header) string {
	if v := h.Get("X-Request-Id"); v != "" {
		return v
	}
	return h.Get("X-Deepseek-Request-Id")
}

// retryAfterMs reads Retry-After as delay seconds or an HTTP date; only a
// positive delay counts.
func retryAfterMs(v string, now time.Time) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs <= 0 || secs > 1<<40 {
			return 0, false
		}
		return secs * 1000, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	ms := t.Sub(now).Milliseconds()
	return ms, ms > 0
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Provider wording that names the context window being exceeded. Only
// explicit phrasings count: a generic "too large" must stay INVALID_REQUEST.
// Compiled on the first failed call, not at every start: the bounded
// repetitions make large programs.
var contextOverflow = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)(?:^|[^a-z0-9])context[\s_-](?:length|window)[\s_-](?:exceed(?:ed|s)?|overflow(?:ed)?|limit[\s_-]exceeded)(?:$|[^a-z0-9])`),
		regexp.MustCompile(`(?i)\b(?:maximum|max)(?:\s+(?:allowed|supported))?\s+context\s+(?:length|window)\b`),
		regexp.MustCompile(`(?i)\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+for\s+(?:(?:this|the)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b`),
		regexp.MustCompile(`(?i)\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+(?:this|the)\s+model\b`),
		regexp.MustCompile(`(?i)\b(?:input|prompt|request|messages?)\b.{0,40}\b(?:exceed(?:s|ed)?|overflows?|is\s+larger\s+than)\b.{0,40}\b(?:the\s+)?(?:model(?:'s)?\s+)?context(?:\s+(?:length|window))?\b`),
	}
})

// Provider wording for an exhausted quota, balance or credit (terminal, not
// a transient rate limit).
var quotaExceeded = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)\binsufficient[\s_-]+(?:quota|balance|credits?)\b`),
		regexp.MustCompile(`(?i)\b(?:quota|usage[\s_-]+limit)[\s_-]+(?:exceeded|exhausted|reached)\b`),
		regexp.MustCompile(`(?i)\bexceed(?:ed|s)?[\s_-]+(?:(?:your|the)[\s_-]+)?(?:current[\s_-]+)?quota\b`),
		regexp.MustCompile(`(?i)\b(?:balance|credits?)[\s_-]+(?:exhausted|depleted)\b`),
		regexp.MustCompile(`(?i)\bout[\s_-]+of[\s_-]+(?:credits?|budget)\b`),
	}
})

func isContextOverflow(detail string) bool { return matchAny(contextOverflow(), detail) }
func isQuotaExceeded(detail string) bool   { return matchAny(quotaExceeded(), detail) }

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
