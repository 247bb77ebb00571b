package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// toolResultLine is shaped like the bulk of a session log: a tool result
// carrying a few kilobytes of escaped source code.
var toolResultLine = []byte(`{"type":"tool/result","seq":17,"time":1750089304459,"data":{"turn":0,"step":0,"message":{"content":[{"type":"tool-result","toolCallId":"call_8cfe65fef9fe6a72","content":[{"type":"text","text":"` +
	strings.Repeat(`func parseRecord(query string, n int) error {\n\tif err := retry(\"/src/parse/tool.go\"); err != nil {\n\t\treturn err\n\t}\n}\n`, 40) +
	`"}]}]}},"surfaceOp":"append"}`)

func BenchmarkValid(b *testing.B) {
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jsonscan", Valid}, {"encoding-json", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(toolResultLine)))
			for b.Loop() {
				if !v.valid(toolResultLine) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
