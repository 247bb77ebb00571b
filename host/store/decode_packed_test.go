package store

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// packedRow50 is an upstream text-chunks row of 50 streamed deltas.
func packedRow50() []byte {
	texts := make([]string, 50)
	dt := make([]int64, 49)
	for i := range texts {
		texts[i] = fmt.Sprintf("token %d with \"quotes\" and <html> ", i)
	}
	for i := range dt {
		dt[i] = int64(i % 7)
	}
	data, _ := json.Marshal(map[string]any{"turn": 3, "step": 1, "index": 0, "dt": dt, "texts": texts})
	return []byte(`{"type":"text-chunks","seq0":0,"time0":1000,"data":` + string(data) + `}`)
}

// BenchmarkDecodePackedRow expands one 50-member packed row.
func BenchmarkDecodePackedRow(b *testing.B) {
	line := packedRow50()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeLine(line, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestChunkDataIsTheMarshalledAssistantChunk pins the hand-written packed
// member payload to the struct it stands for, so a field added to
// session.AssistantChunk cannot silently go missing from expanded rows.
func TestChunkDataIsTheMarshalledAssistantChunk(t *testing.T) {
	for _, c := range []struct {
		turn, step int
		chunk      string
	}{{0, 0, `{"type":"text-delta","index":0,"delta":""}`}, {3, -1, `{"type":"tool-call-delta","index":2,"id":"c","argumentsDelta":"\u2028<&>"}`}, {1 << 40, 7, `{}`}} {
		want, err := session.Marshal(session.AssistantChunk{Turn: c.turn, Step: c.step, Chunk: json.RawMessage(c.chunk)})
		if err != nil {
			t.Fatal(err)
		}
		if got := chunkData(c.turn, c.step, []byte(c.chunk)); string(got) != string(want) {
			t.Errorf("chunkData = %s, want %s", got, want)
		}
	}
}
