package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
)

// JSON-RPC error codes the frame filter answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// frameWriter serializes whole frames onto the output: the SDK writes each
// frame with one Write call, and the filter's own error frames take the same
// lock, so frames never interleave.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
	// answers hears of every answer to a request the filter forwarded.
	answers *ledger
	// ids frees the id of every answer before it is written.
	ids *inflight
	// onAnswer, when set, sees every answer just before it is written and
	// returns frames to write right after it, in the same critical
	// section, so nothing comes between.
	onAnswer func(frame []byte) []byte
}

// Write is the SDK's writer: it counts the answers among its frames.
func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := isAnswer(p)
	if id, ok := answerID(p); ok && f.ids != nil {
		f.ids.release(id)
	}
	var after []byte
	if answer && f.onAnswer != nil {
		after = f.onAnswer(p)
	}
	n, err := f.w.Write(p)
	if answer && f.answers != nil {
		f.answers.answered()
	}
	if err == nil && len(after) > 0 {
		_, err = f.w.Write(after)
	}
	return n, err
}

// writeOwn writes a frame of the filter's, which answers nothing the SDK
// was handed.
func (f *frameWriter) writeOwn(p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.w.Write(p)
	return err
}

// errorFrame writes a JSON-RPC error response; id nil means "null".
func (f *frameWriter) errorFrame(id json.RawMessage, code int, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		return err
	}
	return f.writeOwn(append(b, '\n'))
}

// frameFilter reads the client's lines and forwards only well-formed
// JSON-RPC messages to the SDK. The SDK drops a line that is not JSON
// without answering and ends the connection on a line over its buffer; the
// filter answers both with an error frame instead, so a client always hears
// back and the agent stays up.
type frameFilter struct {
	in  io.Reader
	out *io.PipeWriter // to the SDK
	w   *frameWriter
	max int
	log *slog.Logger
	// requests records every request forwarded to the SDK.
	requests *ledger
	// ids holds the ids of the requests forwarded and not yet answered.
	ids *inflight
}

// run copies frames until the input ends, then closes the SDK's side.
func (f *frameFilter) run() {
	err := f.copy()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	_ = f.out.CloseWithError(err)
}

func (f *frameFilter) copy() error {
	r := bufio.NewReaderSize(f.in, 64<<10)
	var line []byte
	for {
		line = line[:0]
		size := 0 // bytes of the current line, newline excluded
		var prefix []byte
		var err error
		for {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			size += len(bytes.TrimSuffix(chunk, []byte{'\n'}))
			switch {
			case size > f.max:
				if prefix == nil {
					prefix = make([]byte, 0, idScanBytes)
					prefix = append(prefix, line[:min(len(line), idScanBytes)]...)
					prefix = append(prefix, chunk[:min(len(chunk), idScanBytes-len(prefix))]...)
					line = line[:0]
				}
			default:
				line = append(line, chunk...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if size > f.max {
			if werr := f.oversized(prefix, size); werr != nil {
				return werr
			}
		} else if ferr := f.frame(line); ferr != nil {
			return ferr
		}
		if err != nil {
			return err
		}
	}
}

// oversized answers a line longer than the SDK accepts. A response to one
// of dsh's requests (an fs/read_text_file of a huge buffer) fails that
// request instead, so it does not wait forever.
func (f *frameFilter) oversized(prefix []byte, size int) error {
	f.log.Warn("acp: dropped an oversized frame", "bytes", size, "limit", f.max)
	id := scanID(prefix)
	if id != nil && isResponsePrefix(prefix) {
		b, err := json.Marshal(struct {
			JSONRPC string           `json:"jsonrpc"`
			ID      json.RawMessage  `json:"id"`
			Error   sdk.RequestError `json:"error"`
		}{"2.0", id, sdk.RequestError{Code: codeInvalidRequest, Message: fmt.Sprintf("the response is %d bytes, over the limit of %d bytes", size, f.max)}})
		if err != nil {
			return err
		}
		_, err = f.out.Write(append(b, '\n'))
		return err
	}
	msg := fmt.Sprintf("Invalid request: the frame is %d bytes, over the limit of %d bytes; "+
		"send large content as a resource link instead of embedding it", size, f.max)
	return f.w.errorFrame(id, codeInvalidRequest, msg)
}

// isResponsePrefix reports whether the start of a frame is a response's:
// a "result" or "error" member and no "method" before it.
func isResponsePrefix(prefix []byte) bool {
	i := bytes.Index(prefix, []byte(`"result"`))
	if j := bytes.Index(prefix, []byte(`"error"`)); i < 0 || j >= 0 && j < i {
		i = j
	}
	return i >= 0 && !bytes.Contains(prefix[:i], []byte(`"method"`))
}

// frame validates one complete line and forwards it or answers it.
func (f *frameFilter) frame(line []byte) error {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	if !json.Valid(trimmed) {
		f.log.Warn("acp: answered a frame that is not JSON", "bytes", len(trimmed))
		return f.w.errorFrame(nil, codeParseError, "Parse error: the frame is not valid JSON; send one JSON-RPC message per line")
	}
	id, request, problem := checkMessage(trimmed)
	if problem != "" {
		f.log.Warn("acp: answered an invalid JSON-RPC message", "problem", problem)
		return f.w.errorFrame(id, codeInvalidRequest, "Invalid request: "+problem)
	}
	if request && f.ids != nil && !f.ids.claim(id) {
		f.log.Warn("acp: answered a request reusing an id in flight", "id", string(id))
		return f.w.errorFrame(id, codeInvalidRequest, "Invalid request: id "+string(id)+
			" belongs to a request that is still in progress; give every request a new id")
	}
	if request && f.requests != nil {
		f.requests.opened()
	}
	trimmed = defaultParams(trimmed)
	if _, err := f.out.Write(append(trimmed, '\n')); err != nil {
		if request && f.requests != nil {
			f.requests.answered() // the SDK will never see it
		}
		if request && f.ids != nil {
			f.ids.release(id)
		}
		return err
	}
	return nil
}

// checkMessage returns the message's id (when usable), whether it is a
// request (a method and an id, which the SDK always answers) and what makes
// it invalid, or "" when the SDK can take it.
func checkMessage(raw []byte) (json.RawMessage, bool, string) {
	id, problem := check(raw)
	if problem != "" {
		return id, false, problem
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	_ = json.Unmarshal(raw, &m)
	return id, m.ID != nil && m.Method != nil, ""
}

func check(raw []byte) (json.RawMessage, string) {
	if raw[0] != '{' {
		return nil, "a JSON-RPC message must be a JSON object (batches are not supported)"
	}
	var m struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "the message is not a JSON-RPC object"
	}
	var id json.RawMessage
	if m.ID != nil {
		if !validID(m.ID) {
			return nil, "id must be a string, a number or null"
		}
		id = m.ID
	}
	if !jsonrpcVersion(m.JSONRPC) {
		return id, `jsonrpc must be "2.0": dsh speaks JSON-RPC 2.0 only`
	}
	if m.Method != nil {
		var method string
		if json.Unmarshal(m.Method, &method) != nil || method == "" {
			return id, "method must be a non-empty string"
		}
		return id, ""
	}
	if m.ID == nil {
		return nil, "the message has neither a method nor an id"
	}
	if m.Result == nil && m.Error == nil {
		return id, "a response needs a result or an error"
	}
	return id, ""
}

func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string, float64:
		return true
	}
	return false
}

// optionalParams are the methods whose params are all optional: a client
// may omit params (or send null), which JSON-RPC allows but the SDK's
// decoder rejects.
var optionalParams = map[string]bool{string(sdk.AgentMethodSessionList): true}

// defaultParams gives a message of an optionalParams method that has no
// params an empty object; every other message is returned as is.
func defaultParams(raw []byte) []byte {
	if !mentionsAny(raw, optionalParams) {
		return raw // the common case: not decoded twice
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || !optionalParams[method] {
		return raw
	}
	if p, ok := m["params"]; ok && !bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
		return raw
	}
	m["params"] = json.RawMessage("{}")
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

func mentionsAny(raw []byte, methods map[string]bool) bool {
	for m := range methods {
		if bytes.Contains(raw, []byte(`"`+m+`"`)) {
			return true
		}
	}
	return false
}

// idScanBytes is how much of an oversized frame is searched for its id.
const idScanBytes = 4096

// topLevelID finds "id": <number or string> before any "params" key, which
// is where clients put the request id; ids nested in params are ignored.
// String ids longer than maxScannedID are not used. (A bounded repetition
// in the pattern would compile to a program of that many copies, paid for
// at every start.)
var topLevelID = lazyregexp.New(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")`)

// maxScannedID is the longest string id, quotes excluded, scanID returns.
const maxScannedID = 256

// scanID returns the id of an oversized request, or nil when it cannot be
// told from the frame's first bytes.
func scanID(prefix []byte) json.RawMessage {
	if p := bytes.Index(prefix, []byte(`"params"`)); p >= 0 {
		prefix = prefix[:p]
	}
	m := topLevelID.FindSubmatch(prefix)
	if m == nil || !json.Valid(m[1]) || m[1][0] == '"' && len(m[1]) > maxScannedID+2 {
		return nil
	}
	return json.RawMessage(append([]byte(nil), m[1]...))
}
