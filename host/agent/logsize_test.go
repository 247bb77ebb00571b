package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// streamedReply streams text in deltas of size bytes, as a provider does.
func streamedReply(text string, size int) script {
	b := session.TextBlock(text)
	cs := []llm.Chunk{{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockText}}
	for len(text) > 0 {
		n := min(size, len(text))
		cs = append(cs, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: text[:n]})
		text = text[n:]
	}
	cs = append(cs, llm.Chunk{Type: llm.ChunkBlockEnd, Index: 0, Block: &b}, usage(10, 2), finish(llm.FinishStop))
	return chunks(cs...)
}

// TestALongStreamedAnswerIsStoredOnceBesideItsDeltas measures the log of a
// turn whose answer is 1 MiB, streamed in 256-byte deltas, against the log
// the same events made when every copy of the text was stored inline
// (the deltas, the block-end chunk and the assistant/message), and checks
// that reading it back yields exactly the events the loop appended.
func TestALongStreamedAnswerIsStoredOnceBesideItsDeltas(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "Paragraph %d of a long answer, with \"quotes\" and a tab\t.\n", i)
	}
	text := sb.String()
	st := store.New(t.TempDir(), store.Options{})
	hdr := session.Header{ID: "sess-long", CreatedAt: epoch.UnixMilli(), Cwd: session.Ptr(t.TempDir())}
	w, err := st.Create(hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(hdr, nil, session.LiveOptions{Sink: w, Now: func() time.Time { return epoch }})
	h := newHarness(t, newFakeProvider(t, streamedReply(text, 256)), withOptions(func(o *Options) { o.Live = live }))
	h.live = live
	h.prompt("Write a long answer.")
	expectTypes(t, h.events(), "turn/start", "step/start", "user/message", "session/title", "request/header",
		"request/context", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	if err := h.agent.Close(); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	inline := 0
	for _, e := range live.Events(0) {
		line, err := e.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		inline += len(line) + 1
	}
	encoded := len(session.MustMarshal(text)) - 2
	t.Logf("answer %d bytes (%d encoded): log %d bytes, %d with every copy inline", len(text), encoded, fi.Size(), inline)
	if saved := inline - int(fi.Size()); saved < 2*encoded-(4<<10) {
		t.Errorf("the log saves %d bytes; want about two copies of the answer (%d)", saved, 2*encoded)
	}
	_, back, err := st.Inspect(context.Background(), hdr.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := live.Events(0)
	if len(back) != len(want) {
		t.Fatalf("read back %d events, the loop appended %d", len(back), len(want))
	}
	for i := range want {
		g, _ := back[i].MarshalLine()
		e, _ := want[i].MarshalLine()
		if string(g) != string(e) {
			t.Fatalf("event %d reads back as\n%.300s\nwant\n%.300s", i, g, e)
		}
	}
}
