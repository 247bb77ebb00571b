package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// scanLineCases are lines whose decoding the one-pass scanner must not
// change: ordinary events, and every shape it hands to encoding/json.
var scanLineCases = []struct {
	line    string
	scanned bool // the scanner decodes it itself
}{
	{`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`, true},
	{` {"type" : "plugin/x", "seq":0, "time":-5, "data":{"b":1,"a":"<\u00e9>"}, "sourceEventSeqs":[0,1], "surfaceOp":{"op":"replace","start":0,"end":1}, "ignorable":true, "extra":[{"deep":null}]}` + "\r", true},
	{`{"data":null,"time":0,"seq":0,"type":"x","ignorable":false}`, true},
	{`{"type":"x","seq":-0,"time":9223372036854775807,"data":"s","ignorable":null,"surfaceOp":"append"}`, true},
	{`{"type":"x","seq":0,"time":1,"data":{},"sourceEventSeqs":null,"seq0":"ignored","Time0":[]}`, true},
	{`{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"naïve \"quoted\"\n"}]},"surfaceOp":"append"}`, true},
	{`{"type":"x","seq":0,"time":1,"data":{},"é":1}`, false},
	{`{"type":"x","seq":0,"time":1,"data":{},"TYPE":"y"}`, false},
	{`{"type":"x","seq":0,"time":1,"data":{},"Data":{"a":1}}`, false},
	{`{"type":"x","seq":0,"time":1,"data":{},"type":"y"}`, false},
	{`{"type":"x","seq":0,"time":1,"data":{},"data":[]}`, false},
	{`{"typ\u0065":"x","seq":0,"time":1,"data":{}}`, false},
	{`{"type":"\u0078","seq":0,"time":1,"data":{}}`, false},
	{`{"type":"ünicode","seq":0,"time":1,"data":{}}`, false},
	{"{\"type\":\"bad\xff\",\"seq\":0,\"time\":1,\"data\":{}}", false},
	{`{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"texts":["a"]}}`, false},
	{`{"type":"x","seq":0,"time":1e3,"data":{}}`, false},
	{`{"type":"x","seq":0,"time":1.0,"data":{}}`, false},
	{`{"type":"x","seq":0,"time":9223372036854775808,"data":{}}`, false},
	{`{"type":"x","seq":1,"time":1,"data":{}}`, false},
	{`{"type":"x","seq":0,"time":1,"data":{},"ignorable":0}`, false},
	{`{"type":"x","seq":0,"time":1,"data":{}} x`, false},
	{`{"type":"x","seq":0,"time":1,"data":{"a":}}`, false},
	{`{"type":"x","seq":0,"time":1,"data":"\x"}`, false},
	{`{"type":"","seq":0,"time":1,"data":{}}`, false},
	{`{"type":null,"seq":0,"time":1,"data":{}}`, false},
	{`{"seq":0,"time":1,"data":{}}`, false},
	{`{"type":"x","seq":0,"time":1}`, false},
	{`[{"type":"x","seq":0,"time":1,"data":{}}]`, false},
	{``, false},
}

func TestScanLineDecodesLikeEncodingJSON(t *testing.T) {
	for _, c := range scanLineCases {
		t.Run(c.line, func(t *testing.T) {
			if _, ok := scanLine([]byte(c.line), 0); ok != c.scanned {
				t.Errorf("scanned = %v, want %v", ok, c.scanned)
			}
			checkScanLine(t, []byte(c.line), 0)
		})
	}
}

func TestScannedPayloadsDoNotShareCapacity(t *testing.T) {
	e, ok := scanLine([]byte(`{"type":"x","seq":0,"time":1,"data":{"a":1},"sourceEventSeqs":[0],"surfaceOp":"append"}`), 0)
	if !ok {
		t.Fatal("ordinary line was not scanned")
	}
	_ = append(e.Data, "XXXXXXXXXXXX"...)
	if string(e.SourceEventSeqs) != `[0]` || string(e.SurfaceOp) != `"append"` {
		t.Fatalf("appending to data overwrote its neighbours: %s %s", e.SourceEventSeqs, e.SurfaceOp)
	}
}

func TestScannedEventsDoNotAliasTheLine(t *testing.T) {
	line := []byte(`{"type":"plugin/x","seq":0,"time":1,"data":{"a":1}}`)
	e, ok := scanLine(line, 0)
	if !ok {
		t.Fatal("ordinary line was not scanned")
	}
	copy(line, bytes.Repeat([]byte{'#'}, len(line)))
	if e.Type != "plugin/x" || string(e.Data) != `{"a":1}` {
		t.Fatalf("event changed with the reader's buffer: %+v", e)
	}
}

// checkScanLine asserts that appendLine (scanner first) and appendLineJSON
// agree on line: the same events, or the same error.
func checkScanLine(t *testing.T, line []byte, next int) {
	t.Helper()
	got, gerr := appendLine(nil, line, next)
	want, werr := appendLineJSON(nil, line, next)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("line %q: error %v, encoding/json path says %v", line, gerr, werr)
	}
	if len(got) != len(want) {
		t.Fatalf("line %q: %d events, encoding/json path gives %d", line, len(got), len(want))
	}
	for i := range got {
		if g, w := describe(got[i]), describe(want[i]); g != w {
			t.Fatalf("line %q:\n got %s\nwant %s", line, g, w)
		}
	}
}

// describe renders every field of e, telling absent raw values from null.
func describe(e session.Event) string {
	raw := func(r json.RawMessage) string {
		if r == nil {
			return "<absent>"
		}
		return string(r)
	}
	ign := "<absent>"
	if e.Ignorable != nil {
		ign = fmt.Sprint(*e.Ignorable)
	}
	return fmt.Sprintf("type=%q seq=%d time=%d data=%s sources=%s surface=%s ignorable=%s",
		e.Type, e.Seq, e.Time, raw(e.Data), raw(e.SourceEventSeqs), raw(e.SurfaceOp), ign)
}

// FuzzScanLineMatchesEncodingJSON: whatever the line, the scanner never
// changes what a log decodes to.
func FuzzScanLineMatchesEncodingJSON(f *testing.F) {
	for _, c := range scanLineCases {
		f.Add([]byte(c.line), 0)
	}
	f.Fuzz(func(t *testing.T, line []byte, next int) {
		checkScanLine(t, line, next&0xffff)
	})
}
