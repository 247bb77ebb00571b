package acp

import (
	"fmt"
	"testing"
)

// nextWithID skips notifications to the frame answering id.
func (r *rawConn) nextWithID(id any) map[string]any {
	r.t.Helper()
	for {
		if f := r.next(); f["id"] == id && f["method"] == nil {
			return f
		}
	}
}

func TestOnlyJSONRPC2IsAccepted(t *testing.T) {
	r := startRaw(t, newWorld(t))
	const want = `Invalid request: jsonrpc must be "2.0": dsh speaks JSON-RPC 2.0 only`
	for i, line := range []string{
		`{"jsonrpc":"1.0","id":%d,"method":"session/list","params":{}}`,
		`{"id":%d,"method":"session/list","params":{}}`,
		`{"jsonrpc":2.0,"id":%d,"method":"session/list","params":{}}`,
	} {
		r.send(fmt.Sprintf(line, i))
		f := r.next()
		code, msg := errorOf(t, f)
		if f["id"] != float64(i) || code != -32600 || msg != want {
			t.Errorf("%s: answered %v", line, f)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":9,"method":"session/list","params":{}}`)
	if f := r.next(); f["id"] != 9.0 || f["result"] == nil {
		t.Errorf("a 2.0 request after them: %v", f)
	}
}

func TestARequestReusingAnIDInFlightIsRefused(t *testing.T) {
	w := newWorld(t)
	r := startRaw(t, w)
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, workspace(t)))
	created := r.nextWithID(1.0)
	sid := created["result"].(map[string]any)["sessionId"].(string)

	w.provider.add(hang)
	prompt := fmt.Sprintf(`{"jsonrpc":"2.0","id":%%s,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, sid)
	r.send(fmt.Sprintf(prompt, `"p"`))
	// The prompt is running once its first delta is out.
	for f := r.next(); f["method"] != "session/update"; f = r.next() {
	}
	for _, dup := range []string{
		`{"jsonrpc":"2.0","id":"p","method":"session/list","params":{}}`,
		fmt.Sprintf(prompt, `"p"`),
	} {
		r.send(dup)
		f := r.nextWithID("p")
		code, msg := errorOf(t, f)
		if code != -32600 || msg != `Invalid request: id "p" belongs to a request that is still in progress; give every request a new id` {
			t.Errorf("%s: answered %v", dup, f)
		}
	}
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid))
	done := r.nextWithID("p")
	if res, _ := done["result"].(map[string]any); res["stopReason"] != "cancelled" {
		t.Fatalf("the first prompt ended %v", done)
	}
	// Answered: the id is free again.
	r.send(`{"jsonrpc":"2.0","id":"p","method":"session/list","params":{}}`)
	if f := r.nextWithID("p"); f["result"] == nil {
		t.Errorf("reusing a finished id: %v", f)
	}
}

func TestIDsAreComparedByValue(t *testing.T) {
	s := newInflight()
	if !s.claim([]byte(`7`)) || s.claim([]byte(`7.0`)) || !s.claim([]byte(`"7"`)) || !s.claim([]byte(`null`)) || !s.claim([]byte(`null`)) {
		t.Fatal("7 and 7.0 must be one id, \"7\" another, null untracked")
	}
	s.release([]byte(`7.0`))
	if !s.claim([]byte(`7`)) {
		t.Error("released 7.0 but 7 stays in flight")
	}
}
