package sessionquery

import (
	"math"
	"slices"
)

// Filter validation has two wordings: the exact-read service (§2.4 of the
// session-query reference) and the search providers, which reject text
// clauses and name unknown kinds differently. Both report INVALID_FILTER.
type filterWording struct {
	unknownKind func(kind string) *Error
	allowText   bool
}

var (
	exactWording  = filterWording{unknownKind: unknownKindExact, allowText: true}
	searchWording = filterWording{unknownKind: unknownKindSearch}
)

var (
	availabilityValues = []string{AvailabilityLive, AvailabilityPersisted}
	surfaceValues      = []string{SurfaceCurrent, SurfaceShadowed, SurfaceLogOnly}
)

// ValidateSessionFilters checks session filters as the exact-read service
// does. A nil slice is no filter; a nil Values (or NullableValues for cwd
// and parent) is "not an array" and fails.
func ValidateSessionFilters(filters []SessionFilter) error {
	return validateSessionFilters(filters, exactWording)
}

// ValidateSearchSessionFilters checks session filters of a search request,
// naming an unknown kind with the search providers' wording.
func ValidateSearchSessionFilters(filters []SessionFilter) error {
	return validateSessionFilters(filters, searchWording)
}

// ValidateEventFilters checks event filters of an exact read (FilterEvents),
// where the literal text clause is allowed.
func ValidateEventFilters(filters []EventFilter) error {
	return validateEventFilters(filters, exactWording)
}

// ValidateMetadataFilters checks the event filters of a search request:
// metadata only, so a text clause fails.
func ValidateMetadataFilters(filters []EventFilter) error {
	return validateEventFilters(filters, searchWording)
}

func validateSessionFilters(filters []SessionFilter, w filterWording) error {
	for _, f := range filters {
		switch f.Kind {
		case KindID:
			if f.Values == nil {
				return valuesNotStrings(f.Kind)
			}
		case KindCwd, KindParent:
			if f.NullableValues == nil {
				return Errorf(CodeInvalidFilter, "session %s filter values must be an array of strings or null", f.Kind)
			}
		case KindCreatedAt:
			if err := validateRange(f.Kind, f.From, f.To); err != nil {
				return err
			}
		case KindAvailability:
			if err := validateClosedValues(f.Kind, f.Values, availabilityValues); err != nil {
				return err
			}
		default:
			return w.unknownKind(f.Kind)
		}
	}
	return nil
}

func validateEventFilters(filters []EventFilter, w filterWording) error {
	for _, f := range filters {
		switch f.Kind {
		case KindSeq, KindTime:
			if err := validateRange(f.Kind, f.From, f.To); err != nil {
				return err
			}
		case KindType:
			if f.Values == nil {
				return valuesNotStrings(f.Kind)
			}
		case KindSurface:
			if err := validateClosedValues(f.Kind, f.Values, surfaceValues); err != nil {
				return err
			}
		case KindText:
			if !w.allowText {
				return Errorf(CodeInvalidFilter, "session-search metadata filters do not accept text clauses")
			}
			if TrimJS(f.Text) == "" {
				return blankText()
			}
		default:
			return w.unknownKind(f.Kind)
		}
	}
	return nil
}

func validateClosedValues(kind string, values, allowed []string) error {
	if values == nil {
		return valuesNotStrings(kind)
	}
	for _, v := range values {
		if !slices.Contains(allowed, v) {
			return Errorf(CodeInvalidFilter, `session %s filter contains unknown value "%s"`, kind, v)
		}
	}
	return nil
}

func validateRange(kind string, from, to *float64) error {
	finite := func(p *float64) bool { return p == nil || !(math.IsNaN(*p) || math.IsInf(*p, 0)) }
	if !finite(from) {
		return Errorf(CodeInvalidFilter, "session %s filter from must be finite", kind)
	}
	if !finite(to) {
		return Errorf(CodeInvalidFilter, "session %s filter to must be finite", kind)
	}
	if from != nil && to != nil && *from > *to {
		return Errorf(CodeInvalidFilter, "session %s filter from must be less than or equal to to", kind)
	}
	return nil
}

func valuesNotStrings(kind string) *Error {
	return Errorf(CodeInvalidFilter, "session %s filter values must be an array of strings", kind)
}

func blankText() *Error {
	return Errorf(CodeInvalidFilter, "session text filter must contain non-whitespace text")
}

func unknownKindExact(kind string) *Error {
	if kind == "" {
		return Errorf(CodeInvalidFilter, "session unknown filter kind (missing)")
	}
	return Errorf(CodeInvalidFilter, `session unknown filter kind "%s"`, kind)
}

func unknownKindSearch(kind string) *Error {
	if kind == "" {
		return Errorf(CodeInvalidFilter, "session filter contains unknown kind (missing)")
	}
	return Errorf(CodeInvalidFilter, `session filter contains unknown kind "%s"`, kind)
}

// CopySessionFilters returns a deep copy of filters that shares no slice or
// pointer with them, so a caller may mutate its filters after a call. A nil
// input stays nil; nil and empty value lists keep their distinction.
func CopySessionFilters(filters []SessionFilter) []SessionFilter {
	if filters == nil {
		return nil
	}
	out := make([]SessionFilter, len(filters))
	for i, f := range filters {
		out[i] = SessionFilter{
			Kind:   f.Kind,
			Values: slices.Clone(f.Values),
			From:   clonePtr(f.From),
			To:     clonePtr(f.To),
		}
		if f.NullableValues != nil {
			nv := make([]*string, len(f.NullableValues))
			for j, v := range f.NullableValues {
				nv[j] = clonePtr(v)
			}
			out[i].NullableValues = nv
		}
	}
	return out
}

// CopyEventFilters returns a deep copy of filters (see CopySessionFilters).
func CopyEventFilters(filters []EventFilter) []EventFilter {
	if filters == nil {
		return nil
	}
	out := make([]EventFilter, len(filters))
	for i, f := range filters {
		out[i] = EventFilter{
			Kind:   f.Kind,
			Values: slices.Clone(f.Values),
			From:   clonePtr(f.From),
			To:     clonePtr(f.To),
			Text:   f.Text,
		}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
