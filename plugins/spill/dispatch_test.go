package spill

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// The Code Mode cases of the spill policy (host.md §5.3, arm 2): the
// durable log copy of a nested sub-call's result is bounded like a result,
// the program's value is not.

func dispatchPolicy(t *testing.T, store Store, limit int) (*Policy, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	return NewPolicy(store, limit, slog.New(slog.NewTextHandler(&logs, nil))), &logs
}

func subCall(name string, live *session.Live) *tools.Call {
	parent := &tools.Call{CallID: "outer-1", Name: "run_code", Session: live}
	return &tools.Call{CallID: "sub-3", Name: name, Parent: parent}
}

// Case 1 and 2: an oversized copy is saved under the label dispatch, keyed
// by the sub-call's id, named <subtool>.txt, owned by the session of the
// call that dispatched it, and replaced by the preview and notice.
func TestDispatchCopyIsSpilledUnderTheSubCall(t *testing.T) {
	store := &fakeStore{}
	p, _ := dispatchPolicy(t, store, testCap)
	live := session.NewLive(session.Header{ID: "sess-1"}, nil, session.LiveOptions{})
	big := strings.Repeat("dispatch output\n", 100)
	got := p.BoundDispatchCopy(context.Background(), subCall("grep", live), big)
	if len(store.saves) != 1 {
		t.Fatalf("%d saves, want 1", len(store.saves))
	}
	want := SaveRequest{SessionID: "sess-1", ToolName: "grep", CallID: "sub-3", Label: "dispatch", SuggestedName: "grep.txt", Content: big}
	if store.saves[0] != want {
		t.Errorf("save = %+v, want %+v", store.saves[0], want)
	}
	wantCopy, _ := replacement(big, Ref{Locator: fakeLocator, Bytes: len(big), RetrievalHint: RetrievalHint}, testCap)
	if got != wantCopy || len(got) > testCap {
		t.Errorf("copy = %q, want the %d-byte preview and notice", got, len(wantCopy))
	}
}

// Case 3: read sub-calls are bounded too (the log copy is not model
// context), unlike read results shown to the model.
func TestDispatchCopyOfAReadIsBounded(t *testing.T) {
	store := &fakeStore{}
	p, _ := dispatchPolicy(t, store, testCap)
	live := session.NewLive(session.Header{ID: "sess-1"}, nil, session.LiveOptions{})
	got := p.BoundDispatchCopy(context.Background(), subCall(readTool, live), strings.Repeat("r", 5000))
	if len(store.saves) != 1 || store.saves[0].SuggestedName != "read.txt" || len(got) > testCap {
		t.Errorf("read copy: %d saves, %d bytes", len(store.saves), len(got))
	}
}

// Case 4: the value the program sees is untouched: only the returned copy
// changes, and the result shown for the nested call passes the
// post-execute arm unchanged.
func TestDispatchLeavesTheProgramValueAlone(t *testing.T) {
	e := newPolicyEnv(t, testCap)
	big := strings.Repeat("v", 5000)
	e.tool(t, "big", big, nil)
	res := e.reg.Run(context.Background(), subCall("big", e.live))
	if session.JoinText(res.Content) != big || res.Value != big {
		t.Fatalf("nested result changed: %d bytes of content", len(session.JoinText(res.Content)))
	}
	if len(e.store.saves) != 0 {
		t.Fatalf("the post-execute arm saved a nested result")
	}
	p, _ := dispatchPolicy(t, e.store, testCap)
	copied := p.BoundDispatchCopy(context.Background(), subCall("big", e.live), big)
	if copied == big || res.Value != big {
		t.Error("the log copy was not bounded, or the value changed with it")
	}
}

// Case 5: a copy within the cap is logged as it is, with no save.
func TestDispatchCopyWithinTheCapIsKept(t *testing.T) {
	store := &fakeStore{}
	p, _ := dispatchPolicy(t, store, testCap)
	live := session.NewLive(session.Header{ID: "sess-1"}, nil, session.LiveOptions{})
	text := strings.Repeat("x", testCap)
	if got := p.BoundDispatchCopy(context.Background(), subCall("grep", live), text); got != text || len(store.saves) != 0 {
		t.Errorf("copy at the cap: %d bytes, %d saves", len(got), len(store.saves))
	}
}

// Case 6: a failed save keeps the whole copy and warns; it never loses
// the text.
func TestDispatchCopyKeptWhenTheSaveFails(t *testing.T) {
	store := &fakeStore{err: errors.New("disk full")}
	p, logs := dispatchPolicy(t, store, testCap)
	live := session.NewLive(session.Header{ID: "sess-1"}, nil, session.LiveOptions{})
	big := strings.Repeat("y", 5000)
	if got := p.BoundDispatchCopy(context.Background(), subCall("grep", live), big); got != big {
		t.Errorf("copy after a failed save has %d bytes, want all %d", len(got), len(big))
	}
	if !strings.Contains(logs.String(), "saving it failed") || !strings.Contains(logs.String(), "label=dispatch") {
		t.Errorf("logs = %q", logs.String())
	}
}

// Case 7: with no session anywhere up the dispatch chain, or a cap too
// small for the notice, the copy stays whole.
func TestDispatchCopyKeptWithoutAnOwnerOrRoomForTheNotice(t *testing.T) {
	store := &fakeStore{}
	p, logs := dispatchPolicy(t, store, testCap)
	big := strings.Repeat("z", 5000)
	if got := p.BoundDispatchCopy(context.Background(), subCall("grep", nil), big); got != big || len(store.saves) != 0 {
		t.Errorf("ownerless copy: %d bytes, %d saves", len(got), len(store.saves))
	}
	if !strings.Contains(logs.String(), "no session") {
		t.Errorf("logs = %q", logs.String())
	}
	tiny, _ := dispatchPolicy(t, store, 10)
	live := session.NewLive(session.Header{ID: "sess-1"}, nil, session.LiveOptions{})
	if got := tiny.BoundDispatchCopy(context.Background(), subCall("grep", live), big); got != big {
		t.Errorf("copy under a tiny cap: %d bytes, want the original", len(got))
	}
}
