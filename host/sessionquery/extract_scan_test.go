package sessionquery

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

var textTypes = []string{
	session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolCall,
	session.TypeToolResult, session.TypeTodoWrite, session.TypeTurnEnd,
}

// scannerCases are raw payloads for the text-bearing types: what writers
// produce, and every shape the scanner leaves to the reference extractor.
var scannerCases = []struct {
	typ, data string
	scanned   bool // the scanner decides it itself
}{
	{session.TypeUserMessage, `{"content":[{"type":"text","text":" hi "}],"source":{"kind":"user"},"role":"user","id":"u"}`, true},
	{session.TypeUserMessage, ` {"content" : [ {"text":"text before type","type":"text"} , null , {"type":null,"text":"untyped"} ] } `, true},
	{session.TypeUserMessage, `{"content":"a string is no block list"}`, true},
	{session.TypeUserMessage, `{"content":{"type":"text","text":"an object is not either"}}`, true},
	{session.TypeUserMessage, `{"content":null}`, true},
	{session.TypeUserMessage, `null`, true},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"esc\n\"aped\" \u00e9\ud83d\ude00 \ud800 lone","ignored":{"deep":[1,2,{"x":"y"}]}}]}`, true},
	{session.TypeUserMessage, "{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff utf8 \"}]}", true},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"\u3000\ufeff spaced \u00a0\n"},{"type":"text","text":"\u0085kept"}]}`, true},
	{session.TypeUserMessage, `{"content":[{"type":"reasoning","text":"hidden"},{"type":"image","data":"x"},{"type":"mystery","text":"hidden"}]}`, true},
	{session.TypeUserMessage, `{"content":[{"type":"tool-call","name":"read","arguments":"{\"path\":\"a\"}"},{"type":"tool-call","name":null,"arguments":{"path":"b"}},{"type":"tool-call","arguments":7}]}`, true},
	{session.TypeUserMessage, `{"content":[{"type":"tool-result","content":[{"type":"text","text":"nested"},{"type":"tool-result","content":" deeper string "}]}]}`, true},
	{session.TypeUserMessage, `{"content":[{"content":[{"type":"text","text":"content before type"}],"type":"tool-result"}]}`, true},
	{session.TypeUserMessage, `{"content":[{"type":"tool-result","content":null},{"type":"tool-result","content":5},{"type":"tool-result"}]}`, true},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"x"}],"Content":[]}`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"x"}],"content":[]}`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"x","TEXT":"y"}]}`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"x"}],"é":1}`, false},
	{session.TypeUserMessage, `{"cont\u0065nt":[{"type":"text","text":"x"}]}`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text"},{"type":"text","text":"kept"}]}`, true},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":7},{"type":"text","text":"kept"}]}`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"a","name":false}]}`, false},
	{session.TypeUserMessage, `{"content":["string block",{"type":"text","text":"kept"}]}`, false},
	{session.TypeUserMessage, `{"content":[{"type":"t\u0065xt","text":"escaped type"}]}`, true},
	{session.TypeUserMessage, `"nope"`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"x"}]`, false},
	{session.TypeUserMessage, `{"content":[{"type":"text","text":"x"}]} trailing`, false},
	{session.TypeUserMessage, ``, false},
	{session.TypeUserMessage, `{"content":` + strings.Repeat(`[{"type":"tool-result","content":`, 70) + `"deep"` + strings.Repeat(`}]`, 70) + `}`, false},
	{session.TypeAssistantMessage, `{"turn":0,"step":0,"message":{"role":"assistant","content":[{"type":"reasoning","text":"r"},{"type":"text","text":"answer"}]}}`, true},
	{session.TypeAssistantMessage, `{"message":null}`, true},
	{session.TypeAssistantMessage, `{"message":"text"}`, false},
	{session.TypeAssistantMessage, `{"message":{"content":[]},"Message":{}}`, false},
	{session.TypeToolCall, `{"turn":0,"step":0,"callId":"c","name":"bash","arguments":"{\"cmd\":\"ls\"}"}`, true},
	{session.TypeToolCall, `{"arguments":{"cmd":"ls"},"name":"bash"}`, true},
	{session.TypeToolCall, `{"name":"bash","arguments":null}`, true},
	{session.TypeToolCall, `{"name":"bash","arguments":[1, 2]}`, true},
	{session.TypeToolCall, `{"name":1,"arguments":"x"}`, false},
	{session.TypeToolResult, `{"message":{"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"out"}]}]},"error":{"name":"Oops","code":"E"}}`, true},
	{session.TypeToolResult, `{"error":{"code":"E","name":"Oops"},"message":{"content":[{"type":"text","text":"first"}]}}`, true},
	{session.TypeToolResult, `{"message":{"content":[{"type":"text","text":"x"}]},"error":{}}`, true},
	{session.TypeToolResult, `{"message":{"content":[{"type":"text","text":"x"}]},"error":null}`, true},
	{session.TypeToolResult, `{"message":{"content":[{"type":"text","text":"x"}]},"error":"str"}`, false},
	{session.TypeToolResult, `{"message":{"content":[{"type":"text","text":"x"}]},"error":{"name":3}}`, false},
	{session.TypeToolResult, `{"message":{"content":[{"type":"text","text":"x"}]},"error":{"name":"a"},"error":null}`, false},
	{session.TypeTodoWrite, `{"todos":[{"content":"ship it","status":"in_progress"},null,{"status":"done"},{"content":" c "}]}`, true},
	{session.TypeTodoWrite, `{"todos":null}`, true},
	{session.TypeTodoWrite, `{"todos":{}}`, false},
	{session.TypeTodoWrite, `{"todos":["x"]}`, false},
	{session.TypeTodoWrite, `{"todos":[{"content":1}]}`, false},
	{session.TypeTurnEnd, `{"turn":0,"reason":{"kind":"error","error":{"message":"boom","code":"E"}}}`, true},
	{session.TypeTurnEnd, `{"reason":{"error":{"message":"boom"},"kind":"error"}}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":"error"}}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":"error","error":null}}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":"aborted","reason":{"kind":"user","reason":"secret"}}}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":"max-tokens"}}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":"interrupt\u0065d"}}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":"completed"}}`, true},
	{session.TypeTurnEnd, `{"reason":null}`, true},
	{session.TypeTurnEnd, `{"reason":{"kind":5}}`, false},
	{session.TypeTurnEnd, `{"reason":{"kind":"error","error":[]}}`, false},
	{session.TypeTurnEnd, `{"reason":[]}`, false},
}

func TestTextScannerAgreesWithTheReferenceExtractor(t *testing.T) {
	for _, c := range scannerCases {
		t.Run(c.typ+" "+c.data, func(t *testing.T) {
			var x textScanner
			if ok := x.scan(c.typ, []byte(c.data)); ok != c.scanned {
				t.Errorf("scanned = %v, want %v", ok, c.scanned)
			}
			checkExtract(t, &x, session.Event{Type: c.typ, Data: json.RawMessage(c.data)})
		})
	}
}

// TestTextScannerReadsWhatWritersWrite pins that the scanner, not the
// reference extractor, handles every payload the session types encode.
func TestTextScannerReadsWhatWritersWrite(t *testing.T) {
	events := append(benchLog(200),
		ev(0, session.TypeUserMessage, userData(mixedBlocks()...)),
		ev(0, session.TypeAssistantMessage, assistantData(mixedBlocks()...)),
		ev(0, session.TypeToolResult, toolResultData("failed", &session.ToolErrorInfo{Name: "Oops", Code: "E_OOPS"})),
		ev(0, session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{{Content: "ship", Status: session.TodoInProgress}}}),
		ev(0, session.TypeTurnEnd, session.TurnEnd{Reason: session.TurnEndReason{Kind: session.EndError, Error: &session.Failure{Message: "boom"}}}),
	)
	var x textScanner
	for _, e := range events {
		if e.Type == session.TypeUserMessage || e.Type == session.TypeAssistantMessage || e.Type == session.TypeToolCall ||
			e.Type == session.TypeToolResult || e.Type == session.TypeTodoWrite || e.Type == session.TypeTurnEnd {
			if !x.scan(e.Type, e.Data) {
				t.Fatalf("the scanner gave up on a %s written by the session types: %s", e.Type, e.Data)
			}
		}
		checkExtract(t, &x, e)
	}
}

func TestTextScannerReuseDoesNotLeakBetweenEvents(t *testing.T) {
	var x textScanner
	long := ev(0, session.TypeUserMessage, userText("a long first message"))
	short := ev(1, session.TypeToolCall, session.ToolCall{Name: "ls"})
	empty := ev(2, session.TypeTurnEnd, turnEnd(session.EndCompleted))
	for _, c := range []struct {
		e    session.Event
		want string
	}{{long, "a long first message"}, {short, "ls"}, {empty, ""}, {long, "a long first message"}} {
		if got := x.text(c.e); got != c.want {
			t.Fatalf("text(%s) = %q, want %q", c.e.Type, got, c.want)
		}
	}
}

func checkExtract(t *testing.T, x *textScanner, e session.Event) {
	t.Helper()
	if got, want := x.text(e), extractTextJSON(e); got != want {
		t.Fatalf("%s %s: scanner text %q, reference %q", e.Type, e.Data, got, want)
	}
}

// FuzzTextScannerMatchesReference: whatever the payload, ExtractText is
// the reference extractor's answer.
func FuzzTextScannerMatchesReference(f *testing.F) {
	for _, c := range scannerCases {
		for i, typ := range textTypes {
			if typ == c.typ {
				f.Add(uint8(i), []byte(c.data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		var x textScanner
		for _, typ := range []string{textTypes[int(typ)%len(textTypes)], textTypes[int(typ+1)%len(textTypes)]} {
			checkExtract(t, &x, session.Event{Type: typ, Data: data})
		}
	})
}
