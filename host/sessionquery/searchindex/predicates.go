package searchindex

import (
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// SQLite FTS5 planner limits, checked before a statement is prepared so that
// an oversized request fails as a typed INVALID_FILTER rather than as a
// SQLite error.
const (
	maxPredicates = 14
	maxBindings   = 32766
	// fixedBindings is what every search statement binds besides its filter
	// values: the match expression and its companions (10) plus limit and
	// offset (2). The events scope adds the target session id.
	fixedBindings = 10 + 2
)

// predicates is a compiled filter list: SQL fragments joined with AND over
// the candidate columns session_id, cwd, created_at, parent_session, live,
// persisted, seq, type, time and surface, and their bound values.
type predicates struct {
	clauses []string
	args    []any
}

// count is the number of outer predicates.
func (p predicates) count() int { return len(p.clauses) }

// sql joins the predicates; empty means no constraint.
func (p predicates) sql() string { return strings.Join(p.clauses, " AND ") }

// where renders " AND <predicates>" for appending to a WHERE clause.
func (p predicates) where() string {
	if len(p.clauses) == 0 {
		return ""
	}
	return " AND " + p.sql()
}

func (p *predicates) add(clause string, args ...any) error {
	p.clauses = append(p.clauses, clause)
	p.args = append(p.args, args...)
	if len(p.clauses) > maxPredicates {
		return invalidFilter(msgPredicates)
	}
	if len(p.args) > maxBindings {
		return invalidFilter(msgBindings)
	}
	return nil
}

// compileSessionPredicates compiles validated session filters.
func compileSessionPredicates(filters []sessionquery.SessionFilter) (predicates, error) {
	if err := sessionquery.ValidateSearchSessionFilters(filters); err != nil {
		return predicates{}, err
	}
	var p predicates
	for _, f := range filters {
		var err error
		switch f.Kind {
		case sessionquery.KindID:
			err = p.in("session_id", f.Values)
		case sessionquery.KindCwd:
			err = p.nullableIn("cwd", f.NullableValues)
		case sessionquery.KindParent:
			err = p.nullableIn("parent_session", f.NullableValues)
		case sessionquery.KindCreatedAt:
			err = p.between("created_at", f.From, f.To)
		case sessionquery.KindAvailability:
			err = p.availability(f.Values)
		}
		if err != nil {
			return predicates{}, err
		}
	}
	return p, nil
}

// compileEventPredicates compiles validated metadata filters.
func compileEventPredicates(filters []sessionquery.EventFilter) (predicates, error) {
	if err := sessionquery.ValidateMetadataFilters(filters); err != nil {
		return predicates{}, err
	}
	var p predicates
	for _, f := range filters {
		var err error
		switch f.Kind {
		case sessionquery.KindSeq:
			err = p.between("seq", f.From, f.To)
		case sessionquery.KindTime:
			err = p.between("time", f.From, f.To)
		case sessionquery.KindType:
			err = p.in("type", f.Values)
		case sessionquery.KindSurface:
			err = p.in("surface", f.Values)
		}
		if err != nil {
			return predicates{}, err
		}
	}
	return p, nil
}

func (p *predicates) in(col string, values []string) error {
	if len(values) == 0 {
		return p.add("0")
	}
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return p.add(col+" IN ("+placeholders(len(values))+")", args...)
}

func (p *predicates) nullableIn(col string, values []*string) error {
	var args []any
	null := false
	for _, v := range values {
		if v == nil {
			null = true
			continue
		}
		args = append(args, *v)
	}
	switch {
	case len(args) == 0 && !null:
		return p.add("0")
	case len(args) == 0:
		return p.add("(" + col + " IS NULL)")
	case !null:
		return p.add("("+col+" IN ("+placeholders(len(args))+"))", args...)
	default:
		return p.add("("+col+" IN ("+placeholders(len(args))+") OR "+col+" IS NULL)", args...)
	}
}

// between compares integer columns with REAL bounds, so sub-millisecond
// bounds keep their meaning instead of being rounded into a reversed range.
func (p *predicates) between(col string, from, to *float64) error {
	if from != nil {
		if err := p.add("CAST("+col+" AS INTEGER) >= ?", *from); err != nil {
			return err
		}
	}
	if to != nil {
		if err := p.add("CAST("+col+" AS INTEGER) <= ?", *to); err != nil {
			return err
		}
	}
	return nil
}

func (p *predicates) availability(values []string) error {
	live := slices.Contains(values, sessionquery.AvailabilityLive)
	persisted := slices.Contains(values, sessionquery.AvailabilityPersisted)
	switch {
	case live && persisted:
		return nil
	case live:
		return p.add("live = 1")
	case persisted:
		return p.add("persisted = 1")
	default:
		return p.add("0")
	}
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n * 3)
	b.WriteString("?")
	for range n - 1 {
		b.WriteString(", ?")
	}
	return b.String()
}

// checkSessionsBudget applies the whole-statement budgets of the sessions
// scope: session and event predicates together, and every binding.
func checkSessionsBudget(sp, ep predicates) error {
	if sp.count()+ep.count() > maxPredicates {
		return invalidFilter(msgPredicates)
	}
	if len(sp.args)+len(ep.args)+fixedBindings > maxBindings {
		return invalidFilter(msgBindings)
	}
	return nil
}

// checkEventsBudget applies the events scope's budgets, where the fixed
// session_id = ? predicate and binding count too.
func checkEventsBudget(ep predicates) error {
	if 1+ep.count() > maxPredicates {
		return invalidFilter(msgPredicates)
	}
	if len(ep.args)+fixedBindings+1 > maxBindings {
		return invalidFilter(msgBindings)
	}
	return nil
}
