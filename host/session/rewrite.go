package session

import (
	"encoding/json"
	"reflect"
)

// checkToolResultRewrite enforces the extra rule for a tool/result that
// replaces surface nodes: it rewrites exactly one current tool/result, and
// its data equals the original's except for the tool-result block's content
// (message.content[0].content). This is what lets a policy shrink an old tool
// output in place without being able to forge a different call or outcome.
func (f *SurfaceFold) checkToolResultRewrite(i int, e Event, shadowed []int) error {
	if len(shadowed) != 1 {
		return eventErr(i, e, "is a tool/result replacement that must rewrite exactly one current node")
	}
	original := f.events[shadowed[0]]
	if original.Type != TypeToolResult {
		return eventErr(i, e, "is a tool/result replacement that must target a current tool/result")
	}
	a, okA := resultWithoutContent(original.Data)
	b, okB := resultWithoutContent(e.Data)
	if !okA || !okB {
		return eventErr(i, e, "is a tool/result replacement, but the original or the replacement has no tool-result block in message.content[0]")
	}
	if !reflect.DeepEqual(a, b) {
		return eventErr(i, e, "is a tool/result replacement that may change only the tool-result content")
	}
	return nil
}

// resultWithoutContent decodes tool/result data generically and blanks the
// part a rewrite may change. Like the upstream comparison it keeps only the
// first content block, with its content set to null. Numbers decode as
// float64 so that 1 and 1.0 compare equal, as they do for a JSON reader.
func resultWithoutContent(data json.RawMessage) (map[string]any, bool) {
	var root map[string]any
	if json.Unmarshal(data, &root) != nil || root == nil {
		return nil, false
	}
	msg, ok := root["message"].(map[string]any)
	if !ok {
		return nil, false
	}
	content, ok := msg["content"].([]any)
	if !ok || len(content) == 0 {
		return nil, false
	}
	block, ok := content[0].(map[string]any)
	if !ok {
		return nil, false
	}
	block["content"] = nil
	msg["content"] = []any{block}
	return root, true
}
