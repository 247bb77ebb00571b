package sessionquery

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func filterRecords() []SessionRecord {
	return []SessionRecord{
		{Header: session.Header{ID: "a", CreatedAt: 1, Cwd: ptr("/w")}, Live: true},
		{Header: session.Header{ID: "b", CreatedAt: 2, ParentSession: ptr("a")}, Persisted: true},
		{Header: session.Header{ID: "c", CreatedAt: 3, Cwd: ptr("/x")}, Live: true, Persisted: true},
	}
}

func recordIDs(rs []SessionRecord) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Header.ID)
	}
	return out
}

func TestSessionFiltersAndAcrossClausesAndOrWithin(t *testing.T) {
	cases := []struct {
		name    string
		filters []SessionFilter
		want    []string
	}{
		{"no filters", nil, []string{"a", "b", "c"}},
		{"id list ORs its values", []SessionFilter{{Kind: KindID, Values: []string{"c", "a"}}}, []string{"a", "c"}},
		{"clauses AND", []SessionFilter{{Kind: KindID, Values: []string{"a", "b", "c"}}, {Kind: KindCwd, NullableValues: []*string{nil}}}, []string{"b"}},
		{"cwd value or null", []SessionFilter{{Kind: KindCwd, NullableValues: []*string{ptr("/x"), nil}}}, []string{"b", "c"}},
		{"parent null matches absent", []SessionFilter{{Kind: KindParent, NullableValues: []*string{nil}}}, []string{"a", "c"}},
		{"parent value", []SessionFilter{{Kind: KindParent, NullableValues: []*string{ptr("a")}}}, []string{"b"}},
		{"availability persisted", []SessionFilter{{Kind: KindAvailability, Values: []string{AvailabilityPersisted}}}, []string{"b", "c"}},
		{"availability either", []SessionFilter{{Kind: KindAvailability, Values: []string{AvailabilityLive, AvailabilityPersisted}}}, []string{"a", "b", "c"}},
		{"created-at inclusive", []SessionFilter{{Kind: KindCreatedAt, From: ptr(2.0), To: ptr(3.0)}}, []string{"b", "c"}},
		{"created-at open range", []SessionFilter{{Kind: KindCreatedAt}}, []string{"a", "b", "c"}},
		{"created-at fractional bounds", []SessionFilter{{Kind: KindCreatedAt, From: ptr(1.5), To: ptr(2.5)}}, []string{"b"}},
		{"empty list matches nothing", []SessionFilter{{Kind: KindID, Values: []string{}}}, []string{}},
		{"empty availability matches nothing", []SessionFilter{{Kind: KindAvailability, Values: []string{}}}, []string{}},
		{"empty cwd list matches nothing", []SessionFilter{{Kind: KindCwd, NullableValues: []*string{}}}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FilterSessionRecords(filterRecords(), tc.filters)
			if err != nil {
				t.Fatal(err)
			}
			if ids := recordIDs(got); !slices.Equal(ids, tc.want) {
				t.Fatalf("ids = %v, want %v", ids, tc.want)
			}
		})
	}
}

func filterDocs() []Document {
	return []Document{
		{EventRecord{"s", 0, session.TypeUserMessage, 100, SurfaceShadowed}, "Hello\n(AI)+"},
		{EventRecord{"s", 1, session.TypeAssistantMessage, 200, SurfaceCurrent}, "café crème"},
		{EventRecord{"s", 2, session.TypeToolResult, 300, SurfaceCurrent}, "Alpha\n beta BRAID"},
		{EventRecord{"s", 3, session.TypeTurnEnd, 400, SurfaceLogOnly}, "interrupted"},
	}
}

func docSeqs(ds []Document) []int {
	out := []int{}
	for _, d := range ds {
		out = append(out, d.Seq)
	}
	return out
}

func TestEventFiltersCombineMetadataAndLiteralText(t *testing.T) {
	cases := []struct {
		name    string
		filters []EventFilter
		want    []int
	}{
		{"no filters", []EventFilter{}, []int{0, 1, 2, 3}},
		{"seq range inclusive", []EventFilter{{Kind: KindSeq, From: ptr(1.0), To: ptr(2.0)}}, []int{1, 2}},
		{"time lower bound", []EventFilter{{Kind: KindTime, From: ptr(300.0)}}, []int{2, 3}},
		{"time fractional bounds", []EventFilter{{Kind: KindTime, From: ptr(199.5), To: ptr(200.5)}}, []int{1}},
		{"type list", []EventFilter{{Kind: KindType, Values: []string{session.TypeTurnEnd, session.TypeUserMessage}}}, []int{0, 3}},
		{"surface list", []EventFilter{{Kind: KindSurface, Values: []string{SurfaceCurrent}}}, []int{1, 2}},
		{"empty surface list matches nothing", []EventFilter{{Kind: KindSurface, Values: []string{}}}, []int{}},
		{"empty type list matches nothing", []EventFilter{{Kind: KindType, Values: []string{}}}, []int{}},
		{"text is literal and whitespace-flexible", []EventFilter{{Kind: KindText, Text: "hello   (ai)+"}}, []int{0}},
		{"text folds case across Unicode", []EventFilter{{Kind: KindText, Text: "CAFÉ"}}, []int{1}},
		{"text does not strip diacritics", []EventFilter{{Kind: KindText, Text: "CAFE"}}, []int{}},
		{"text spans newline and spaces", []EventFilter{{Kind: KindText, Text: "alpha beta"}}, []int{2}},
		{"text is a substring scan", []EventFilter{{Kind: KindText, Text: "AI"}}, []int{0, 2}},
		{"text metacharacters are literal", []EventFilter{{Kind: KindText, Text: "c.fé"}}, []int{}},
		{"all clauses AND", []EventFilter{
			{Kind: KindSeq, From: ptr(0.0), To: ptr(3.0)},
			{Kind: KindTime, To: ptr(300.0)},
			{Kind: KindType, Values: []string{session.TypeToolResult, session.TypeUserMessage}},
			{Kind: KindSurface, Values: []string{SurfaceCurrent, SurfaceShadowed}},
			{Kind: KindText, Text: "beta"},
		}, []int{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FilterDocuments(filterDocs(), tc.filters)
			if err != nil {
				t.Fatal(err)
			}
			if seqs := docSeqs(got); !slices.Equal(seqs, tc.want) {
				t.Fatalf("seqs = %v, want %v", seqs, tc.want)
			}
		})
	}
}

func TestTextFilterWhitespaceIsTheJavaScriptClass(t *testing.T) {
	re, err := CompileTextFilter("\uFEFFa b\u3000")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a b", "xa\u3000\u2028by", "A\uFEFFB", "a\t\n\v\f\r b"} {
		if !re.Match(s) {
			t.Errorf("%q does not match", s)
		}
	}
	for _, s := range []string{"ab", "a\u0085b", "a_b"} {
		if re.Match(s) {
			t.Errorf("%q matches", s)
		}
	}
}

// The text filter stays literal (issue 16 extends full-text search, not
// this filter): identifier parts match as substrings, never across an
// identifier's boundaries as words.
func TestTextFilterMatchesIdentifierPartsOnlyAsSubstrings(t *testing.T) {
	cases := []struct {
		filter, doc string
		want        bool
	}{
		{"SessionHeader", "call parseSessionHeader(line)", true},
		{"sessionheader", "call parseSessionHeader(line)", true},
		{"header", "call parseSessionHeader(line)", true},
		{"session_header", "open session_header.go", true},
		{"session header", "call parseSessionHeader(line)", false},
		{"session header", "open session_header.go", false},
		{"session header", "parse-session-header", false},
		{"session header", "the session\nheader line", true},
		{"AI", "OpenAI and BRAID", true}, // a substring, unlike full-text search's tokens
	}
	for _, tc := range cases {
		m, err := CompileTextFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(tc.doc); got != tc.want {
			t.Errorf("filter %q on %q = %v, want %v", tc.filter, tc.doc, got, tc.want)
		}
	}
}

func TestInvalidFiltersAreRejectedWithTheirMessages(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	sessionCases := []struct {
		name    string
		filters []SessionFilter
		message string
	}{
		{"id values not an array", []SessionFilter{{Kind: KindID}}, "session id filter values must be an array of strings"},
		{"availability values not an array", []SessionFilter{{Kind: KindAvailability}}, "session availability filter values must be an array of strings"},
		{"cwd values not an array", []SessionFilter{{Kind: KindCwd}}, "session cwd filter values must be an array of strings or null"},
		{"parent values not an array", []SessionFilter{{Kind: KindParent, Values: []string{"x"}}}, "session parent filter values must be an array of strings or null"},
		{"missing kind", []SessionFilter{{Values: []string{"a"}}}, "session unknown filter kind (missing)"},
		{"unknown kind", []SessionFilter{{Kind: "future", Values: []string{"a"}}}, `session unknown filter kind "future"`},
		{"event kind in session filters", []SessionFilter{{Kind: KindSeq}}, `session unknown filter kind "seq"`},
		{"unknown availability", []SessionFilter{{Kind: KindAvailability, Values: []string{"live", "archived"}}}, `session availability filter contains unknown value "archived"`},
		{"NaN from", []SessionFilter{{Kind: KindCreatedAt, From: &nan}}, "session created-at filter from must be finite"},
		{"infinite to", []SessionFilter{{Kind: KindCreatedAt, To: &inf}}, "session created-at filter to must be finite"},
		{"from after to", []SessionFilter{{Kind: KindCreatedAt, From: ptr(2.0), To: ptr(1.0)}}, "session created-at filter from must be less than or equal to to"},
		{"later clause invalid", []SessionFilter{{Kind: KindID, Values: []string{}}, {Kind: "x"}}, `session unknown filter kind "x"`},
	}
	for _, tc := range sessionCases {
		t.Run("session/"+tc.name, func(t *testing.T) {
			wantError(t, ValidateSessionFilters(tc.filters), CodeInvalidFilter, tc.message)
			// Rejected even when there is nothing to filter.
			_, err := FilterSessionRecords(nil, tc.filters)
			wantError(t, err, CodeInvalidFilter, tc.message)
		})
	}
	eventCases := []struct {
		name    string
		filters []EventFilter
		message string
	}{
		{"type values not an array", []EventFilter{{Kind: KindType}}, "session type filter values must be an array of strings"},
		{"surface values not an array", []EventFilter{{Kind: KindSurface}}, "session surface filter values must be an array of strings"},
		{"unknown surface", []EventFilter{{Kind: KindSurface, Values: []string{"hidden"}}}, `session surface filter contains unknown value "hidden"`},
		{"whitespace-only text", []EventFilter{{Kind: KindText, Text: " \n\u3000\uFEFF"}}, "session text filter must contain non-whitespace text"},
		{"empty text", []EventFilter{{Kind: KindText}}, "session text filter must contain non-whitespace text"},
		{"NaN seq from", []EventFilter{{Kind: KindSeq, From: &nan}}, "session seq filter from must be finite"},
		{"infinite time to", []EventFilter{{Kind: KindTime, To: &inf}}, "session time filter to must be finite"},
		{"reversed seq", []EventFilter{{Kind: KindSeq, From: ptr(3.0), To: ptr(2.0)}}, "session seq filter from must be less than or equal to to"},
		{"missing kind", []EventFilter{{}}, "session unknown filter kind (missing)"},
		{"session kind in event filters", []EventFilter{{Kind: KindID, Values: []string{"a"}}}, `session unknown filter kind "id"`},
	}
	for _, tc := range eventCases {
		t.Run("event/"+tc.name, func(t *testing.T) {
			wantError(t, ValidateEventFilters(tc.filters), CodeInvalidFilter, tc.message)
			_, err := FilterDocuments(nil, tc.filters)
			wantError(t, err, CodeInvalidFilter, tc.message)
		})
	}
}

func TestSearchFilterValidationUsesTheSearchWording(t *testing.T) {
	wantError(t, ValidateMetadataFilters([]EventFilter{{Kind: KindText, Text: "x"}}), CodeInvalidFilter,
		"session-search metadata filters do not accept text clauses")
	wantError(t, ValidateMetadataFilters([]EventFilter{{Kind: "future"}}), CodeInvalidFilter,
		`session filter contains unknown kind "future"`)
	wantError(t, ValidateMetadataFilters([]EventFilter{{}}), CodeInvalidFilter,
		"session filter contains unknown kind (missing)")
	wantError(t, ValidateSearchSessionFilters([]SessionFilter{{Kind: "future"}}), CodeInvalidFilter,
		`session filter contains unknown kind "future"`)
	wantError(t, ValidateMetadataFilters([]EventFilter{{Kind: KindSurface, Values: []string{"x"}}}), CodeInvalidFilter,
		`session surface filter contains unknown value "x"`)
	if err := ValidateMetadataFilters([]EventFilter{{Kind: KindSeq, From: ptr(1.0)}, {Kind: KindType, Values: []string{"plugin/x"}}}); err != nil {
		t.Fatalf("valid metadata filters rejected: %v", err)
	}
}

func TestCopiedFiltersAreDetachedFromTheCaller(t *testing.T) {
	cwd := "/w"
	sf := []SessionFilter{{Kind: KindCwd, NullableValues: []*string{&cwd, nil}}, {Kind: KindID, Values: []string{"a"}}, {Kind: KindCreatedAt, From: ptr(1.0)}}
	sc := CopySessionFilters(sf)
	cwd = "/changed"
	sf[1].Values[0] = "changed"
	*sf[2].From = 99
	sf[0].NullableValues[1] = ptr("x")
	if *sc[0].NullableValues[0] != "/w" || sc[0].NullableValues[1] != nil || sc[1].Values[0] != "a" || *sc[2].From != 1 {
		t.Fatalf("session filter copy follows the caller: %+v", sc)
	}
	ef := []EventFilter{{Kind: KindType, Values: []string{"t"}}, {Kind: KindSeq, To: ptr(2.0)}}
	ec := CopyEventFilters(ef)
	ef[0].Values[0] = "changed"
	*ef[1].To = 99
	if ec[0].Values[0] != "t" || *ec[1].To != 2 {
		t.Fatalf("event filter copy follows the caller: %+v", ec)
	}
	if CopySessionFilters([]SessionFilter{{Kind: KindID, Values: []string{}}})[0].Values == nil {
		t.Fatal("an empty value list became nil (not an array)")
	}
	if CopyEventFilters(nil) != nil || CopySessionFilters(nil) != nil {
		t.Fatal("nil filters did not stay nil")
	}
}

func TestTextFilterRejectsNothingButBlankText(t *testing.T) {
	for _, text := range []string{`.*`, `(`, `\`, `[a-`, `$^`, strings.Repeat("a", 10000), "\xff\xfe"} {
		re, err := CompileTextFilter(text)
		if err != nil {
			t.Fatalf("CompileTextFilter(%q): %v", text, err)
		}
		if !re.Match("x" + text + "x") {
			t.Fatalf("%q does not match itself", text)
		}
	}
}
