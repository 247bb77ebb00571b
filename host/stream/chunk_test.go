package stream

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestChunkJSONRoundTrip(t *testing.T) {
	block := session.ToolCallBlock("c1", "read", `{"path":"<a>"}`)
	tests := []struct {
		chunk Chunk
		json  string
	}{
		{Chunk{Type: ChunkBlockStart, Index: 0, BlockType: "reasoning"}, `{"type":"block-start","index":0,"blockType":"reasoning"}`},
		{Chunk{Type: ChunkTextDelta, Index: 1, Delta: "a<b>"}, `{"type":"text-delta","index":1,"delta":"a<b>"}`},
		{Chunk{Type: ChunkToolCallDelta, Index: 2, ID: "c1", Name: "read", ArgumentsDelta: `{"pa`}, `{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"{\"pa"}`},
		{Chunk{Type: ChunkBlockEnd, Index: 2, Block: &block}, `{"type":"block-end","index":2,"block":{"type":"tool-call","id":"c1","name":"read","arguments":"{\"path\":\"<a>\"}"}}`},
		{Chunk{Type: ChunkUsage, Usage: &session.Usage{InputTokens: 3, OutputTokens: 4}}, `{"type":"usage","usage":{"inputTokens":3,"outputTokens":4}}`},
		{Chunk{Type: ChunkFinish, Kind: FinishError, Failure: &session.Failure{Message: "m", Code: "SERVER", Status: 500}}, `{"type":"finish","kind":"error","failure":{"message":"m","code":"SERVER","status":500}}`},
	}
	for _, tt := range tests {
		t.Run(tt.chunk.Type, func(t *testing.T) {
			got, err := session.Marshal(tt.chunk)
			if err != nil || string(got) != tt.json {
				t.Fatalf("marshal = %s, %v; want %s", got, err, tt.json)
			}
			var back Chunk
			if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, tt.chunk) {
				t.Fatalf("unmarshal = %+v, %v; want %+v", back, err, tt.chunk)
			}
		})
	}
}

func TestChunkUnmarshalReadsUpstreamSpellings(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Chunk
	}{
		{"delta text under text", `{"type":"text-delta","index":0,"text":"DONE"}`, Chunk{Type: ChunkTextDelta, Delta: "DONE"}},
		{"reasoning text under text", `{"type":"reasoning-delta","index":1,"text":"hm"}`, Chunk{Type: ChunkReasoningDelta, Index: 1, Delta: "hm"}},
		{"finish reason object", `{"type":"finish","reason":{"kind":"tool-calls"}}`, Chunk{Type: ChunkFinish, Kind: FinishToolCalls}},
		{"finish reason with failure", `{"type":"finish","reason":{"kind":"error","failure":{"message":"x","code":"EMPTY_RESPONSE"}}}`,
			Chunk{Type: ChunkFinish, Kind: FinishError, Failure: &session.Failure{Message: "x", Code: "EMPTY_RESPONSE"}}},
		{"own spelling wins", `{"type":"text-delta","index":0,"delta":"a","text":"b"}`, Chunk{Type: ChunkTextDelta, Delta: "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Chunk
			if err := json.Unmarshal([]byte(tt.json), &got); err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestChunkUnmarshalRejectsUnknownType(t *testing.T) {
	var c Chunk
	if err := json.Unmarshal([]byte(`{"type":"thinking"}`), &c); err == nil {
		t.Fatal("want error for unknown chunk type")
	}
}
