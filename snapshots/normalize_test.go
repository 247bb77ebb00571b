package snapshots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// node is a JSON value that keeps its object key order, so normalized logs
// compare byte for byte like the files dsh writes.
type node struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	kids []*node
	str  string
	num  json.Number
	b    bool
}

func parse(raw []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &node{kind: 'a'}
		if v == '{' {
			n.kind = 'o'
		}
		for dec.More() {
			if n.kind == 'o' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			kid, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: 's', str: v}, nil
	case json.Number:
		return &node{kind: 'n', num: v}, nil
	case bool:
		return &node{kind: 'b', b: v}, nil
	default:
		return &node{kind: 'z'}, nil
	}
}

func (n *node) encode(buf *bytes.Buffer) {
	switch n.kind {
	case 'o', 'a':
		open, close := byte('['), byte(']')
		if n.kind == 'o' {
			open, close = '{', '}'
		}
		buf.WriteByte(open)
		for i, kid := range n.kids {
			if i > 0 {
				buf.WriteByte(',')
			}
			if n.kind == 'o' {
				buf.Write(session.MustMarshal(n.keys[i]))
				buf.WriteByte(':')
			}
			kid.encode(buf)
		}
		buf.WriteByte(close)
	case 's':
		buf.Write(session.MustMarshal(n.str))
	case 'n':
		buf.WriteString(n.num.String())
	case 'b':
		fmt.Fprint(buf, n.b)
	default:
		buf.WriteString("null")
	}
}

func (n *node) compact() []byte {
	var buf bytes.Buffer
	n.encode(&buf)
	return buf.Bytes()
}

// get returns the member at key of an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.kids[i]
		}
	}
	return nil
}

// set replaces the member at key when present.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.kids[i] = v
		}
	}
}

// strings applies fn to every string value (not keys) below n.
func (n *node) strings(fn func(string) string) {
	switch n.kind {
	case 's':
		n.str = fn(n.str)
	case 'o', 'a':
		for _, kid := range n.kids {
			kid.strings(fn)
		}
	}
}

func str(s string) *node { return &node{kind: 's', str: s} }
func num(s string) *node { return &node{kind: 'n', num: json.Number(s)} }

// normalizer replaces the volatile values of one run (host.md §10.3): the
// run's directories, spill file locations and ids. Ids become {{idN}} in
// order of first appearance, so distinct sessions stay distinct.
type normalizer struct {
	paths []pathToken // longest first
	ids   map[string]string
}

type pathToken struct{ path, token string }

var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	spillRE = regexp.MustCompile(`/tmp/dsh-snap(?:shot-spill|-[0-9a-f]{9})/session-[0-9a-f]{12}/[0-9a-f]{12}-([A-Za-z0-9._~-]*[A-Za-z0-9_~-])`)
)

func newNormalizer(e *env) *normalizer {
	n := &normalizer{ids: map[string]string{}}
	add := func(p, token string) {
		n.paths = append(n.paths, pathToken{p, token})
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			n.paths = append(n.paths, pathToken{real, token})
		}
	}
	add(e.cwd, "{{cwd}}")
	add(e.other, "{{other}}")
	add(e.home, "{{home}}")
	sort.SliceStable(n.paths, func(i, j int) bool { return len(n.paths[i].path) > len(n.paths[j].path) })
	return n
}

func (n *normalizer) string(s string) string {
	s = spillRE.ReplaceAllString(s, "{{spillLocator:$1}}")
	for _, p := range n.paths {
		s = strings.ReplaceAll(s, p.path, p.token)
	}
	return uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		tok, ok := n.ids[id]
		if !ok {
			tok = fmt.Sprintf("{{id%d}}", len(n.ids)+1)
			n.ids[id] = tok
		}
		return tok
	})
}

// stdout normalizes the agent's output: every line must be a JSON frame
// (the stdout purity check); $/cancel_request frames, whose timing is the
// SDK's, are dropped, and the agent version is tokenized.
func (n *normalizer) stdout(raw []byte) ([]byte, error) {
	var out bytes.Buffer
	for i, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		f, err := parse(line)
		if err != nil || f.kind != 'o' {
			return nil, fmt.Errorf("stdout line %d is not a JSON-RPC frame: %q", i+1, truncate(line))
		}
		if m := f.get("method"); m != nil && m.str == "$/cancel_request" {
			continue
		}
		if isLiveOutput(f) {
			continue
		}
		if info := f.get("result").get("agentInfo"); info != nil {
			info.set("version", str("{{version}}"))
		}
		f.strings(n.string)
		out.Write(f.compact())
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// isLiveOutput reports a command's live output (a tool_call_update in
// progress that carries output): how much of it a read sees depends on
// timing, so transcripts leave it out; the host/acp tests pin it.
func isLiveOutput(f *node) bool {
	u := f.get("params").get("update")
	if u == nil {
		return false
	}
	kind, status := u.get("sessionUpdate"), u.get("status")
	return kind != nil && kind.str == "tool_call_update" && status != nil && status.str == "in_progress" &&
		(u.get("content") != nil || u.get("_meta") != nil)
}

// log normalizes a persisted session log: times to 0, the request header's
// bulk to {{system}} and {{tools}} (the class goldens pin it), strings
// scrubbed. Key order and everything else stay as written.
func (n *normalizer) log(raw []byte) ([]byte, error) {
	var out bytes.Buffer
	for i, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		r, err := parse(line)
		if err != nil || r.kind != 'o' {
			return nil, fmt.Errorf("log line %d is not a JSON object: %q", i+1, truncate(line))
		}
		if i == 0 {
			r.set("createdAt", num("0"))
		} else {
			r.set("time", num("0"))
		}
		if t := r.get("type"); t != nil && t.str == session.TypeRequestHeader {
			if h := r.get("data").get("header"); h != nil {
				if h.get("system") != nil {
					h.set("system", str("{{system}}"))
				}
				if h.get("tools") != nil {
					h.set("tools", str("{{tools}}"))
				}
			}
		}
		r.strings(n.string)
		out.Write(r.compact())
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
