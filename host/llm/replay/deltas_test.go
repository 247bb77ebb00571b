package replay

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// TestALogWithLongTextsStoredOnceReplaysItsChunks records a call whose
// text the store keeps once (as its deltas, the block-end referring to
// them) and replays it: the block-end must come back whole.
func TestALogWithLongTextsStoredOnceReplaysItsChunks(t *testing.T) {
	text := strings.Repeat("a long answer, ", 400)
	block := session.TextBlock(text)
	recorded := []llm.Chunk{{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockText}}
	for i := 0; i < len(text); i += 100 {
		recorded = append(recorded, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: text[i:min(i+100, len(text))]})
	}
	recorded = append(recorded, llm.Chunk{Type: llm.ChunkBlockEnd, Index: 0, Block: &block}, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishStop})

	st := store.New(t.TempDir(), store.Options{})
	w, err := st.Create(session.Header{ID: "rec-1", CreatedAt: 1, Cwd: session.Ptr("/w")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq := 0
	add := func(typ string, data any) {
		if err := w.Append(session.Event{Type: typ, Seq: seq, Data: session.MustMarshal(data)}); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	add(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1})
	var want []string
	for _, c := range recorded {
		add(session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Step: 1, Chunk: session.MustMarshal(c)})
		want = append(want, string(session.MustMarshal(c)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(w.Path()); err != nil || !bytes.Contains(raw, []byte(`"deltaRefs"`)) {
		t.Fatalf("the recorded log does not store the text once (err %v)", err)
	}

	p := newReplay(t, Config{Fixtures: []string{w.Path()}})
	mustCall(t, p, request("live-1", "go"), want...)
}
