package session

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func closedTurn(first, turn int, text string, kind string) []Event {
	return []Event{
		logEv(first, TypeTurnStart, TurnStart{Turn: turn}),
		userEv(first+1, text),
		logEv(first+2, TypeTurnEnd, TurnEnd{Turn: turn, Reason: TurnEndReason{Kind: kind}}),
	}
}

func forkSource() Header {
	h := validHeader()
	h.ID = "parent"
	h.DelegationDepth = Ptr(1)
	h.AgentPreset = Ptr("code")
	h.Owner = Ptr("alice")
	h.Origin = Ptr("subagent")
	return h
}

func TestForkLatestCopiesTheWholeClosedLog(t *testing.T) {
	events := append(closedTurn(0, 1, "hello", EndCompleted), logEv(3, "plugin/log-only", map[string]string{"v": "after"}))
	child, seed, err := Fork(forkSource(), events, ForkLatest, "child", 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(seed) != 4 || seed[3].Type != "plugin/log-only" {
		t.Fatalf("seed = %d events, last %s", len(seed), seed[len(seed)-1].Type)
	}
	want := Header{
		Version: 0, ID: "child", CreatedAt: 42, Cwd: Ptr("/work/proj"), DelegationDepth: Ptr(1),
		ParentSession: Ptr("parent"), SeedLength: Ptr(4), AgentPreset: Ptr("code"), Owner: Ptr("alice"),
	}
	gotJSON, _ := Marshal(child)
	wantJSON, _ := Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("child header = %s\nwant           %s", gotJSON, wantJSON)
	}
	if err := ValidateHeader(child, "child"); err != nil {
		t.Fatalf("child header invalid: %v", err)
	}
}

func TestForkSeedIsADeepCopy(t *testing.T) {
	events := closedTurn(0, 1, "hello", EndCompleted)
	events[1].SourceEventSeqs = Sources(0)
	_, seed, err := Fork(forkSource(), events, ForkLatest, "child", 1)
	if err != nil {
		t.Fatal(err)
	}
	seed[1].Data[2] = 'X'
	seed[1].SurfaceOp[1] = 'X'
	seed[1].SourceEventSeqs[1] = '9'
	if !strings.HasPrefix(string(events[1].Data), `{"content"`) || string(events[1].SurfaceOp) != `"append"` || string(events[1].SourceEventSeqs) != `[0]` {
		t.Fatalf("mutating the seed changed the source: %s %s %s", events[1].Data, events[1].SurfaceOp, events[1].SourceEventSeqs)
	}
}

func TestForkAtAnEarlierBoundaryWhileTheSourceHasAnOpenTail(t *testing.T) {
	events := closedTurn(0, 1, "first", EndCompleted)
	events = append(events, closedTurn(3, 2, "second", EndCompleted)...)
	events = append(events, logEv(6, TypeTurnStart, TurnStart{Turn: 3}), userEv(7, "open"))
	child, seed, err := Fork(forkSource(), events, 2, "child", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(seed) != 3 || *child.SeedLength != 3 {
		t.Fatalf("seed = %d, seedLength = %d", len(seed), *child.SeedLength)
	}
	msgs, err := DeriveMessages(seed)
	if err != nil || len(msgs) != 1 || JoinText(msgs[0].Content) != "first" {
		t.Fatalf("child history = %+v, %v", msgs, err)
	}
	// ForkLatest stops before the open turn.
	_, seed, err = Fork(forkSource(), events, ForkLatest, "child", 1)
	if err != nil || len(seed) != 6 || seed[5].Type != TypeTurnEnd {
		t.Fatalf("ForkLatest seed = %d events, %v", len(seed), err)
	}
}

func TestForkAcceptsEveryTurnEndReasonAsABoundary(t *testing.T) {
	for _, kind := range []string{EndCompleted, EndAborted, EndError, EndBlocked, EndMaxTokens, EndInterrupted} {
		events := closedTurn(0, 1, kind, kind)
		_, seed, err := Fork(forkSource(), events, 2, "child", 1)
		if err != nil || len(seed) != 3 {
			t.Fatalf("%s: seed %d, %v", kind, len(seed), err)
		}
	}
}

func TestForkOfAnEmptyLogIsAnEmptySeed(t *testing.T) {
	child, seed, err := Fork(forkSource(), nil, ForkLatest, "child", 1)
	if err != nil || len(seed) != 0 || *child.SeedLength != 0 {
		t.Fatalf("Fork(empty) = %v, %d, %v", child.SeedLength, len(seed), err)
	}
	onlyOpen := []Event{logEv(0, TypeTurnStart, TurnStart{Turn: 1})}
	if _, seed, err := Fork(forkSource(), onlyOpen, ForkLatest, "child", 1); err != nil || len(seed) != 0 {
		t.Fatalf("Fork(open turn at 0) = %d, %v", len(seed), err)
	}
}

func TestForkRefusals(t *testing.T) {
	closed := closedTurn(0, 1, "a", EndCompleted)
	gap := closedTurn(0, 1, "a", EndCompleted)
	gap[2].Seq = 7
	invalid := append(closedTurn(0, 1, "a", EndCompleted), userEv(3, "b", replace(9, 9), src(1)))
	cases := []struct {
		name     string
		events   []Event
		boundary int
		childID  string
		at       int64
		code     string
		msg      string
	}{
		{"boundary on an empty log", nil, 0, "child", 1, ForkInvalidBoundary, `fork boundary 0 does not exist in session "parent" (last seq: none)`},
		{"boundary past the end", closed, 3, "child", 1, ForkInvalidBoundary, `fork boundary 3 does not exist in session "parent" (last seq: 2)`},
		{"negative boundary", closed, -2, "child", 1, ForkInvalidBoundary, `fork boundary for session "parent" must be a non-negative seq or ForkLatest, got -2`},
		{"non-contiguous boundary", gap, 2, "child", 1, ForkInvalidBoundary, `fork boundary 2 does not match a contiguous event seq in session "parent"`},
		{"boundary at turn/start", closed, 0, "child", 1, ForkOpenTurn, `fork boundary 0 in session "parent" ends inside open turn 1; fork at or after its turn/end, or before seq 0`},
		{"boundary at a user message inside the turn", closed, 1, "child", 1, ForkOpenTurn, `fork boundary 1 in session "parent" ends inside open turn 1; fork at or after its turn/end, or before seq 0`},
		{"invalid source log", invalid, 3, "child", 1, ForkInvalidSource, `cannot fork session "parent": its log is invalid: invalid seed event at index 3: session event 3 ("user/message") replaces from start seq 9, which is not in the current surface`},
		{"empty child id", closed, ForkLatest, "", 1, ForkInvalidChild, "fork child session id must not be empty"},
		{"child id equal to the source", closed, ForkLatest, "parent", 1, ForkInvalidChild, `fork child session id "parent" is the source session id`},
		{"negative createdAt", closed, ForkLatest, "child", -1, ForkInvalidChild, "fork child createdAt must be a non-negative safe integer, got -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, seed, err := Fork(forkSource(), tc.events, tc.boundary, tc.childID, tc.at)
			var fe *ForkError
			if !errors.As(err, &fe) || fe.Code != tc.code || fe.Message != tc.msg || seed != nil {
				t.Fatalf("Fork = %v (%#v), want %s %q", err, err, tc.code, tc.msg)
			}
			if !IsForkError(err, tc.code) {
				t.Fatal("IsForkError did not match")
			}
		})
	}
	_, _, err := Fork(forkSource(), invalid, 3, "child", 1)
	if !errors.As(err, new(*FoldError)) {
		t.Fatalf("invalid-source fork error %v does not wrap the fold error", err)
	}
}

func TestMarkEndSeedIsTheFirstLiveWriteAndShiftsSeqs(t *testing.T) {
	source := []Event{userEv(0, "seed")}
	child, seed, err := Fork(forkSource(), source, ForkLatest, "child", 1)
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return time.UnixMilli(77) }
	l := NewLive(child, seed, LiveOptions{Now: clock})
	appended, err := MarkEndSeed(l)
	if err != nil || !appended {
		t.Fatalf("MarkEndSeed = %v, %v", appended, err)
	}
	next, err := l.Append(TypeUserMessage, userMsg(2, "live"))
	if err != nil {
		t.Fatal(err)
	}
	if next.Seq != 2 {
		t.Fatalf("first live message seq = %d, want 2", next.Seq)
	}
	_, events := l.Snapshot()
	if events[1].Type != TypeEndSeed || string(events[1].Data) != "{}" || events[1].Time != 77 {
		t.Fatalf("end-seed event = %+v", events[1])
	}
	if err := ValidateLog(child, events); err != nil {
		t.Fatalf("child log invalid: %v", err)
	}
}

func TestMarkEndSeedDoesNotReMarkAnUntouchedSeededLog(t *testing.T) {
	l := NewLive(validHeader(), []Event{userEv(0, "a"), logEv(1, TypeEndSeed, nil)}, LiveOptions{})
	appended, err := MarkEndSeed(l)
	if err != nil || appended || l.Len() != 2 {
		t.Fatalf("MarkEndSeed on a marked log = %v, %v, len %d", appended, err, l.Len())
	}
	empty := NewLive(validHeader(), nil, LiveOptions{})
	if appended, err := MarkEndSeed(empty); err != nil || !appended || empty.Len() != 1 {
		t.Fatalf("MarkEndSeed on an empty seed = %v, %v", appended, err)
	}
	closed := NewLive(validHeader(), nil, LiveOptions{})
	_ = closed.Close()
	if _, err := MarkEndSeed(closed); err == nil {
		t.Fatal("MarkEndSeed on a closed session succeeded")
	}
	_, events := empty.Snapshot()
	if !slices.Equal([]string{events[0].Type}, []string{TypeEndSeed}) {
		t.Fatalf("events = %+v", events)
	}
}
