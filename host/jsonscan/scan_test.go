package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `1E+9`, `true`, `false`, `null`, ` {"a" : [1, "x", {"b":null}] } `,
	`"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r"`, `"\uD83D"`, `"\ud800\u0041"`, "\"\xff\xfe raw\"", `"` + strings.Repeat("abcdefgh", 9) + `"`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `+1`, `0x1`, `NaN`, `tru`, `nulls`, `"\x"`, `"\u12"`,
	`"\u12G4"`, `"tab	inside"`, "\"nl\ninside\"", `"unterminated`, `{"a":1}}`, `[1] [2]`, ``, ` `, `{"a":1`, `[`, `"\`,
	`[1,2,3,4,5,6,7,8,9,"0123456789\"abcdef\\"]`, "\"\x7f\"", `{"":""}`, `[-1.0e+10,0.0,-0E0]`, `1 2`, "\v1", "\u00a01",
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func TestValidRejectsNestingBeyondMaxDepth(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	deep := "[" + ok + "]"
	if !Valid([]byte(ok)) {
		t.Errorf("rejected %d levels", MaxDepth)
	}
	if Valid([]byte(deep)) {
		t.Errorf("accepted %d levels", MaxDepth+1)
	}
}

func TestStringFlagsDescribeTheToken(t *testing.T) {
	cases := []struct {
		tok   string
		flags StrFlags
	}{
		{`"plain ascii"`, 0},
		{`"esc\n"`, Escaped},
		{`"café"`, NonASCII},
		{`"café\n"`, Escaped | NonASCII},
		{`"` + strings.Repeat("x", 40) + `é` + strings.Repeat("y", 40) + `"`, NonASCII},
		{`"` + strings.Repeat("x", 40) + `\"` + strings.Repeat("y", 40) + `"`, Escaped},
	}
	for _, c := range cases {
		end, flags, ok := String([]byte(c.tok+",rest"), 0)
		if !ok || end != len(c.tok) || flags != c.flags {
			t.Errorf("String(%s) = %d, %b, %v; want %d, %b, true", c.tok, end, flags, ok, len(c.tok), c.flags)
		}
	}
}

func TestUnquoteAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		checkUnquote(t, []byte(c))
	}
}

func TestIntAcceptsWhatEncodingJSONDecodesIntoInt64(t *testing.T) {
	for _, tok := range []string{`0`, `-0`, `42`, `-42`, `9223372036854775807`, `-9223372036854775808`,
		`9223372036854775808`, `1.0`, `1e3`, `"1"`, `+1`, `0x1`, `1_0`, `--1`, `-`, ``, `true`, `"x"`} {
		var want int64
		werr := json.Unmarshal([]byte(tok), &want)
		got, ok := Int([]byte(tok))
		if ok != (werr == nil) || ok && got != want {
			t.Errorf("Int(%q) = %d, %v; encoding/json gives %d, %v", tok, got, ok, want, werr)
		}
	}
	// encoding/json leaves an int64 alone for null; a token that must be a
	// number is not one.
	if _, ok := Int([]byte(`null`)); ok {
		t.Error("Int accepted null")
	}
}

// checkUnquote compares Unquote with encoding/json on doc when doc is a
// string token String accepts.
func checkUnquote(t *testing.T, doc []byte) {
	t.Helper()
	if len(doc) == 0 || doc[0] != '"' {
		return
	}
	end, _, ok := String(doc, 0)
	if !ok || end != len(doc) {
		return
	}
	var want string
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatalf("String accepted %q, encoding/json rejects it: %v", doc, err)
	}
	if got := Unquote([]byte("prefix"), doc); string(got) != "prefix"+want {
		t.Fatalf("Unquote(%q) = %q, want %q", doc, got[len("prefix"):], want)
	}
}

// FuzzScanAgreesWithEncodingJSON pins the package invariant: never accept
// what encoding/json rejects, and (below MaxDepth) accept everything it
// accepts, decoding strings to the same bytes.
func FuzzScanAgreesWithEncodingJSON(f *testing.F) {
	for _, c := range validityCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := Valid(doc), json.Valid(doc); got != want && (got || bytes.Count(doc, []byte("[")) < MaxDepth && bytes.Count(doc, []byte("{")) < MaxDepth) {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", doc, got, want)
		}
		checkUnquote(t, bytes.TrimSpace(doc))
	})
}
