package session

import (
	"encoding/json"
	"testing"
)

func TestMarshalKeepsMarkupAndDashesByteForByte(t *testing.T) {
	text := "<system-reminder>a && b — c</system-reminder>"
	b, err := Marshal(userMsg(0, text))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":"<system-reminder>a && b — c</system-reminder>"}],"source":{"kind":"user"},"role":"user","id":"u-0"}`
	if string(b) != want {
		t.Fatalf("Marshal = %s\nwant      %s", b, want)
	}
	std, _ := json.Marshal(text)
	if string(std) == `"`+text+`"` {
		t.Fatal("encoding/json no longer escapes HTML; this test no longer proves anything")
	}
}

func TestEventLineKeyOrderIsTypeSeqTimeDataSourcesSurfaceOp(t *testing.T) {
	e := Event{
		SurfaceOp:       OpReplace(1, 2),
		SourceEventSeqs: Sources(1, 2),
		Data:            json.RawMessage(`{"z":1,"a":"<b>—</b>"}`),
		Time:            1700000000123,
		Seq:             3,
		Type:            TypeUserMessage,
	}
	b, err := e.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"user/message","seq":3,"time":1700000000123,"data":{"z":1,"a":"<b>—</b>"},"sourceEventSeqs":[1,2],"surfaceOp":{"op":"replace","start":1,"end":2}}`
	if string(b) != want {
		t.Fatalf("MarshalLine = %s\nwant          %s", b, want)
	}
	plain, _ := Event{Type: TypeTurnStart, Seq: 0, Time: 5}.MarshalLine()
	if string(plain) != `{"type":"turn/start","seq":0,"time":5,"data":{}}` {
		t.Fatalf("non-surface line = %s", plain)
	}
}

func TestEventRoundTripKeepsRawPayloadBytes(t *testing.T) {
	line := `{"type":"plugin/x","seq":0,"time":1,"data":{"b":2,  "a":"\u003ctag\u003e","n":1.50}}`
	var e Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	out, err := e.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	// Compaction of whitespace is the only change: keys, escapes and number
	// spelling survive.
	want := `{"type":"plugin/x","seq":0,"time":1,"data":{"b":2,"a":"\u003ctag\u003e","n":1.50}}`
	if string(out) != want {
		t.Fatalf("round trip = %s\nwant         %s", out, want)
	}
}
