package store

import (
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestPackedRowsExpandToChunkEvents(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string // type seq time data
	}{
		{
			name: "text",
			line: `{"type":"text-chunks","seq0":5,"time0":1000,"data":{"turn":1,"step":2,"index":1,"dt":[3,0],"texts":["He","l<b>","lo—"]}}`,
			want: []string{
				`assistant/chunk 5 1000 {"turn":1,"step":2,"chunk":{"type":"text-delta","index":1,"delta":"He"}}`,
				`assistant/chunk 6 1003 {"turn":1,"step":2,"chunk":{"type":"text-delta","index":1,"delta":"l<b>"}}`,
				`assistant/chunk 7 1003 {"turn":1,"step":2,"chunk":{"type":"text-delta","index":1,"delta":"lo—"}}`,
			},
		},
		{
			name: "reasoning",
			line: `{"type":"reasoning-chunks","seq0":5,"time0":-10,"data":{"turn":3,"step":1,"index":0,"dt":[7],"texts":["think","ing"]}}`,
			want: []string{
				`assistant/chunk 5 -10 {"turn":3,"step":1,"chunk":{"type":"reasoning-delta","index":0,"delta":"think"}}`,
				`assistant/chunk 6 -3 {"turn":3,"step":1,"chunk":{"type":"reasoning-delta","index":0,"delta":"ing"}}`,
			},
		},
		{
			name: "tool call",
			line: `{"type":"tool-call-chunks","seq0":5,"time0":50,"data":{"turn":1,"step":1,"index":2,"id":"call_1","name":"read","dt":[1,2],"args":["{\"pa","th\":","\"a\"}"]}}`,
			want: []string{
				`assistant/chunk 5 50 {"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"call_1","name":"read","argumentsDelta":"{\"pa"}}`,
				`assistant/chunk 6 51 {"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"call_1","name":"read","argumentsDelta":"th\":"}}`,
				`assistant/chunk 7 53 {"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"call_1","name":"read","argumentsDelta":"\"a\"}"}}`,
			},
		},
		{
			name: "single member without dt",
			line: `{"type":"text-chunks","seq0":5,"time0":9,"data":{"turn":1,"step":1,"index":0,"texts":["x"]}}`,
			want: []string{`assistant/chunk 5 9 {"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"delta":"x"}}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := decodeLine([]byte(tt.line), 5)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range events {
				got = append(got, strings.Join([]string{e.Type, itoa(e.Seq), itoa64(e.Time), string(e.Data)}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestPackedRowsInALogContinueSeqs(t *testing.T) {
	fx := newFixture(t, Options{})
	writeLog(t, fx.s, "s-packed", rawHeader("s-packed")+
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`+"\n"+
		`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`+"\n"+
		`{"type":"turn/end","seq":4,"time":5,"data":{"turn":1,"reason":{"kind":"completed"}}}`+"\n")
	_, events, err := fx.s.Inspect(t.Context(), "s-packed")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 5 || events[3].Seq != 3 || events[3].Time != 4 || events[4].Type != session.TypeTurnEnd {
		t.Fatalf("events = %+v", events)
	}
}

func TestDecodeLineRejectsBadEnvelopes(t *testing.T) {
	tests := map[string]string{
		"not an object":     `["type"]`,
		"null":              `null`,
		"invalid json":      `{"type":"x","seq":0,`,
		"missing type":      `{"seq":0,"time":1,"data":{}}`,
		"type not string":   `{"type":7,"seq":0,"time":1,"data":{}}`,
		"null type":         `{"type":null,"seq":0,"time":1,"data":{}}`,
		"empty type":        `{"type":"","seq":0,"time":1,"data":{}}`,
		"missing seq":       `{"type":"x","time":1,"data":{}}`,
		"wrong seq":         `{"type":"x","seq":3,"time":1,"data":{}}`,
		"fractional seq":    `{"type":"x","seq":0.5,"time":1,"data":{}}`,
		"string seq":        `{"type":"x","seq":"0","time":1,"data":{}}`,
		"missing time":      `{"type":"x","seq":0,"data":{}}`,
		"exponent time":     `{"type":"x","seq":0,"time":1e3,"data":{}}`,
		"missing data":      `{"type":"x","seq":0,"time":1}`,
		"ignorable string":  `{"type":"x","seq":0,"time":1,"data":{},"ignorable":"yes"}`,
		"packed wrong seq0": `{"type":"text-chunks","seq0":1,"time0":0,"data":{"turn":1,"step":1,"index":0,"texts":["a"]}}`,
		"packed no time0":   `{"type":"text-chunks","seq0":0,"data":{"turn":1,"step":1,"index":0,"texts":["a"]}}`,
		"packed dt length":  `{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[1,2],"texts":["a","b"]}}`,
		"packed no texts":   `{"type":"reasoning-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"texts":[]}}`,
		"packed no index":   `{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"texts":["a"]}}`,
		"packed tool texts": `{"type":"tool-call-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"texts":["a"]}}`,
		"packed data array": `{"type":"text-chunks","seq0":0,"time0":0,"data":[1]}`,
	}
	for name, line := range tests {
		if events, err := decodeLine([]byte(line), 0); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, events)
		}
	}
}

func TestDecodeLineKeepsPayloadBytes(t *testing.T) {
	line := `{"type":"plugin/x","seq":2,"time":-5,"data":{"b":1,"a":"<\u00e9>"},"sourceEventSeqs":[0,1],"surfaceOp":{"op":"replace","start":0,"end":1},"ignorable":true,"extra":1}`
	events, err := decodeLine([]byte(line), 2)
	if err != nil {
		t.Fatal(err)
	}
	e := events[0]
	if string(e.Data) != `{"b":1,"a":"<\u00e9>"}` || string(e.SourceEventSeqs) != `[0,1]` ||
		string(e.SurfaceOp) != `{"op":"replace","start":0,"end":1}` || e.Ignorable == nil || !*e.Ignorable || e.Time != -5 {
		t.Errorf("event = %+v", e)
	}
}

func TestCorruptLineInTheMiddleNamesFileAndLine(t *testing.T) {
	tests := map[string]string{
		"invalid json": `{"type":"x","seq":1,"time":2,"data":{]`,
		"wrong seq":    `{"type":"x","seq":7,"time":2,"data":{}}`,
		"no data":      `{"type":"x","seq":1,"time":2}`,
	}
	for name, bad := range tests {
		t.Run(name, func(t *testing.T) {
			fx := newFixture(t, Options{})
			content := rawHeader("s-mid") + lines(ev(0, "a", `{}`)) + bad + "\n" + lines(ev(2, "c", `{}`))
			path := writeLog(t, fx.s, "s-mid", content)
			_, _, err := fx.s.Inspect(t.Context(), "s-mid")
			ce := asCorrupt(t, err)
			if ce.Path != path || ce.Line != 3 {
				t.Errorf("CorruptError = %s:%d, want %s:3", ce.Path, ce.Line, path)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 3") {
				t.Errorf("message %q must name the file and line", err)
			}
			_, _, err = fx.s.Load(t.Context(), "s-mid")
			asCorrupt(t, err)
			if string(readFile(t, path)) != content {
				t.Error("Load modified a corrupt log")
			}
		})
	}
}

func TestBadHeaderIsCorruptAtLineOne(t *testing.T) {
	tests := map[string]string{
		"empty file":      ``,
		"truncated":       `{"type":"session","version":0,"id":"s-h"`,
		"truncated line":  `{"type":"session","version":0,"id":"s-h"` + "\n",
		"not a header":    `{"type":"turn/start","seq":0,"time":1,"data":{}}` + "\n",
		"wrong version":   `{"type":"session","version":1,"id":"s-h","createdAt":1}` + "\n",
		"relative cwd":    `{"type":"session","version":0,"id":"s-h","createdAt":1,"cwd":"rel"}` + "\n",
		"id mismatch":     rawHeader("s-other"),
		"blank first":     "\n" + rawHeader("s-h"),
		"string creation": `{"type":"session","version":0,"id":"s-h","createdAt":"1"}` + "\n",
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			fx := newFixture(t, Options{})
			writeLog(t, fx.s, "s-h", content)
			for op, err := range map[string]error{
				"inspect": second(fx.s.Inspect(t.Context(), "s-h")),
				"stat":    statErr(fx.s, t, "s-h"),
				"load":    second(fx.s.Load(t.Context(), "s-h")),
			} {
				if ce := asCorrupt(t, err); ce.Line != 1 {
					t.Errorf("%s: line = %d, want 1", op, ce.Line)
				}
			}
		})
	}
}

func TestTenMegabyteLineRoundTrips(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("s-huge"))
	big := strings.Repeat("0123456789", 1_100_000)
	mustAppend(t, w, ev(0, session.TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"delta":"`+big+`"}}`),
		ev(1, session.TypeTurnStart, `{"turn":1}`))
	mustClose(t, w)
	for _, read := range []func() ([]session.Event, error){
		func() ([]session.Event, error) { _, e, err := fx.s.Inspect(t.Context(), "s-huge"); return e, err },
		func() ([]session.Event, error) { _, e, err := fx.s.Load(t.Context(), "s-huge"); return e, err },
	} {
		events, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if len(events) < 2 || !strings.Contains(string(events[0].Data), big) || events[1].Type != session.TypeTurnStart {
			t.Fatalf("huge line did not survive: %d events", len(events))
		}
	}
	if entries, err := fx.s.List(t.Context()); err != nil || len(entries) != 1 {
		t.Fatalf("List = %v, %v", entries, err)
	}
}

func TestBlankLinesAreSkipped(t *testing.T) {
	fx := newFixture(t, Options{})
	writeLog(t, fx.s, "s-blank", rawHeader("s-blank")+"\n"+lines(ev(0, "a", `{}`))+"  \r\n"+lines(ev(1, "b", `{}`)))
	_, events, err := fx.s.Inspect(t.Context(), "s-blank")
	if err != nil || len(events) != 2 {
		t.Fatalf("Inspect = %d events, %v", len(events), err)
	}
}

func second[A, B any](_ A, _ B, err error) error { return err }

func statErr(s *Store, t *testing.T, id string) error {
	_, err := s.Stat(t.Context(), id)
	return err
}

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
