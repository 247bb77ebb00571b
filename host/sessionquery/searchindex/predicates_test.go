package searchindex

import (
	"reflect"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func TestCompileSessionPredicatesRendersThePinnedFragments(t *testing.T) {
	tests := []struct {
		name    string
		filters []sessionquery.SessionFilter
		sql     string
		args    []any
	}{
		{"empty id", []sessionquery.SessionFilter{{Kind: "id", Values: []string{}}}, "0", nil},
		{"ids", []sessionquery.SessionFilter{{Kind: "id", Values: []string{"a", "b"}}}, "session_id IN (?, ?)", []any{"a", "b"}},
		{"empty cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: []*string{}}}, "0", nil},
		{"null cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(nil)}}, "(cwd IS NULL)", nil},
		{"one cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(strp("/a"))}}, "(cwd IN (?))", []any{"/a"}},
		{"mixed parent", []sessionquery.SessionFilter{{Kind: "parent", NullableValues: nullable(strp("p"), nil)}}, "(parent_session IN (?) OR parent_session IS NULL)", []any{"p"}},
		{"empty created-at", []sessionquery.SessionFilter{{Kind: "created-at"}}, "", nil},
		{
			"pinned combination",
			[]sessionquery.SessionFilter{
				{Kind: "created-at", From: floatp(1), To: floatp(2)},
				{Kind: "availability", Values: []string{}},
				{Kind: "availability", Values: []string{"live", "live"}},
				{Kind: "availability", Values: []string{"live", "persisted"}},
			},
			"CAST(created_at AS INTEGER) >= ? AND CAST(created_at AS INTEGER) <= ? AND 0 AND live = 1",
			[]any{1.0, 2.0},
		},
		{"persisted only", []sessionquery.SessionFilter{{Kind: "availability", Values: []string{"persisted"}}}, "persisted = 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compileSessionPredicates(tt.filters)
			if err != nil {
				t.Fatal(err)
			}
			if p.sql() != tt.sql || !reflect.DeepEqual(p.args, tt.args) {
				t.Errorf("compiled %q %v, want %q %v", p.sql(), p.args, tt.sql, tt.args)
			}
		})
	}
	p, _ := compileSessionPredicates([]sessionquery.SessionFilter{
		{Kind: "created-at", From: floatp(1), To: floatp(2)},
		{Kind: "availability", Values: []string{}},
		{Kind: "availability", Values: []string{"live", "live"}},
		{Kind: "availability", Values: []string{"live", "persisted"}},
	})
	if p.count() != 4 {
		t.Errorf("count = %d, want 4", p.count())
	}
}

func TestCompileEventPredicatesRendersThePinnedFragments(t *testing.T) {
	p, err := compileEventPredicates([]sessionquery.EventFilter{
		{Kind: "seq", From: floatp(1), To: floatp(3)},
		{Kind: "time", To: floatp(10.5)},
		{Kind: "type", Values: []string{"user/message", "tool/result"}},
		{Kind: "surface", Values: []string{"shadowed"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "CAST(seq AS INTEGER) >= ? AND CAST(seq AS INTEGER) <= ? AND CAST(time AS INTEGER) <= ? AND type IN (?, ?) AND surface IN (?)"
	if p.sql() != want || !reflect.DeepEqual(p.args, []any{1.0, 3.0, 10.5, "user/message", "tool/result", "shadowed"}) {
		t.Errorf("compiled %q %v", p.sql(), p.args)
	}
	empty, err := compileEventPredicates([]sessionquery.EventFilter{{Kind: "type", Values: []string{}}, {Kind: "surface", Values: []string{}}})
	if err != nil || empty.sql() != "0 AND 0" {
		t.Errorf("empty lists = %q, %v; want 0 AND 0", empty.sql(), err)
	}
}

func TestPredicateBuildersAcceptFourteenAndRejectFifteen(t *testing.T) {
	ids := func(n int) []sessionquery.SessionFilter {
		out := make([]sessionquery.SessionFilter, n)
		for i := range out {
			out[i] = sessionquery.SessionFilter{Kind: "id", Values: []string{"x"}}
		}
		return out
	}
	if _, err := compileSessionPredicates(ids(14)); err != nil {
		t.Errorf("14 predicates: %v", err)
	}
	_, err := compileSessionPredicates(ids(15))
	if qe := wantCode(t, err, sessionquery.CodeInvalidFilter); qe.Message != msgPredicates {
		t.Errorf("message = %q", qe.Message)
	}
	types := make([]sessionquery.EventFilter, 15)
	for i := range types {
		types[i] = sessionquery.EventFilter{Kind: "type", Values: []string{"t"}}
	}
	if _, err := compileEventPredicates(types[:14]); err != nil {
		t.Errorf("14 event predicates: %v", err)
	}
	_, err = compileEventPredicates(types)
	wantCode(t, err, sessionquery.CodeInvalidFilter)
}

func TestPredicateBuildersRejectInvalidFilters(t *testing.T) {
	for _, f := range []sessionquery.SessionFilter{{Kind: "nope"}, {Kind: "availability", Values: []string{"soon"}}, {}} {
		_, err := compileSessionPredicates([]sessionquery.SessionFilter{f})
		wantCode(t, err, sessionquery.CodeInvalidFilter)
	}
	for _, f := range []sessionquery.EventFilter{{Kind: "nope"}, {Kind: "surface", Values: []string{"x"}}, {}} {
		_, err := compileEventPredicates([]sessionquery.EventFilter{f})
		wantCode(t, err, sessionquery.CodeInvalidFilter)
	}
}

func TestBindingBudgets(t *testing.T) {
	values := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "v"
		}
		return out
	}
	half := values(16383)
	sp, err := compileSessionPredicates([]sessionquery.SessionFilter{{Kind: "id", Values: half}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := compileEventPredicates([]sessionquery.EventFilter{{Kind: "type", Values: half}})
	if err != nil {
		t.Fatal(err)
	}
	err = checkSessionsBudget(sp, ep)
	if qe := wantCode(t, err, sessionquery.CodeInvalidFilter); qe.Message != msgBindings {
		t.Errorf("message = %q", qe.Message)
	}
	_, err = compileSessionPredicates([]sessionquery.SessionFilter{{Kind: "id", Values: values(125000)}})
	if qe := wantCode(t, err, sessionquery.CodeInvalidFilter); !strings.Contains(qe.Message, "32766") {
		t.Errorf("message = %q", qe.Message)
	}
	seven, _ := compileSessionPredicates(make7())
	eight, _ := compileEventPredicates(make8())
	wantCode(t, checkSessionsBudget(seven, eight), sessionquery.CodeInvalidFilter)
	thirteen, _ := compileEventPredicates(make8()[:7])
	if err := checkEventsBudget(thirteen); err != nil {
		t.Errorf("7 event predicates in the events scope: %v", err)
	}
}

func make7() []sessionquery.SessionFilter {
	out := make([]sessionquery.SessionFilter, 7)
	for i := range out {
		out[i] = sessionquery.SessionFilter{Kind: "id", Values: []string{"a"}}
	}
	return out
}

func make8() []sessionquery.EventFilter {
	out := make([]sessionquery.EventFilter, 8)
	for i := range out {
		out[i] = sessionquery.EventFilter{Kind: "type", Values: []string{"a"}}
	}
	return out
}
