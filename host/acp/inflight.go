package acp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// inflight is the set of request ids handed to the SDK and not answered on
// the wire yet. JSON-RPC ids must be unique among a client's pending
// requests; the SDK does not check, so two requests with one id would both
// run and both be answered with it. The filter refuses the second instead.
type inflight struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func newInflight() *inflight { return &inflight{ids: map[string]struct{}{}} }

// claim records id as in flight; false means it already is. A null id is
// not tracked: it cannot be told apart from another null.
func (s *inflight) claim(id json.RawMessage) bool {
	key, ok := idKey(id)
	if !ok {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.ids[key]; dup {
		return false
	}
	s.ids[key] = struct{}{}
	return true
}

// release frees id once its answer is about to be written (or the request
// never reached the SDK), so the client may reuse it as soon as it reads
// the answer.
func (s *inflight) release(id json.RawMessage) {
	if key, ok := idKey(id); ok {
		s.mu.Lock()
		delete(s.ids, key)
		s.mu.Unlock()
	}
}

// idKey names an id by value: 7 and 7.0 are one id, 7 and "7" are two.
func idKey(id json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// answerID returns the id of an outgoing answer frame (see isAnswer).
func answerID(frame []byte) (json.RawMessage, bool) {
	if !isAnswer(frame) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(frame[len(responsePrefix):]))
	var id json.RawMessage
	if dec.Decode(&id) != nil {
		return nil, false
	}
	return id, true
}

// jsonrpcVersion reports whether a message's jsonrpc member is exactly the
// string "2.0", which JSON-RPC 2.0 requires of every message.
func jsonrpcVersion(raw json.RawMessage) bool {
	var v string
	return json.Unmarshal(raw, &v) == nil && v == "2.0"
}
