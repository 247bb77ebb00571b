package sessionquery

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// CompileTextFilter compiles caller text into a literal, case-insensitive,
// whitespace-flexible matcher: the text is trimmed, split on runs of
// JavaScript whitespace, each part is quoted, and the parts are joined by
// one-or-more whitespace. It matches anywhere in a document's text. Blank
// text fails with INVALID_FILTER.
func CompileTextFilter(text string) (*regexp.Regexp, error) {
	parts := FieldsJS(validRunes(text))
	if len(parts) == 0 {
		return nil, blankText()
	}
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile(`(?i)` + strings.Join(parts, JSSpacePattern))
	if err != nil {
		// Quoted literals always compile; keep the failure typed regardless.
		return nil, Wrap(CodeInvalidFilter, err, "session text filter could not be compiled")
	}
	return re, nil
}

// validRunes replaces each invalid UTF-8 byte with U+FFFD, one for one, which
// is exactly how the matcher decodes the same bytes in a document, so text
// with stray bytes still matches itself.
func validRunes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// FilterSessionRecords validates filters and returns the records accepted by
// every clause (AND), preserving their order. Within a list clause any value
// matches (OR); an empty list matches nothing; ranges are inclusive.
func FilterSessionRecords(records []SessionRecord, filters []SessionFilter) ([]SessionRecord, error) {
	if err := ValidateSessionFilters(filters); err != nil {
		return nil, err
	}
	out := []SessionRecord{}
	for _, r := range records {
		if matchSession(r, filters) {
			out = append(out, r)
		}
	}
	return out, nil
}

func matchSession(r SessionRecord, filters []SessionFilter) bool {
	for _, f := range filters {
		ok := false
		switch f.Kind {
		case KindID:
			ok = slices.Contains(f.Values, r.Header.ID)
		case KindCwd:
			ok = containsNullable(f.NullableValues, r.Header.Cwd)
		case KindParent:
			ok = containsNullable(f.NullableValues, r.Header.ParentSession)
		case KindCreatedAt:
			ok = inRange(float64(r.Header.CreatedAt), f.From, f.To)
		case KindAvailability:
			ok = slices.ContainsFunc(f.Values, func(v string) bool {
				return (v == AvailabilityLive && r.Live) || (v == AvailabilityPersisted && r.Persisted)
			})
		}
		if !ok {
			return false
		}
	}
	return true
}

// FilterDocuments validates filters (text clauses allowed) and returns the
// documents accepted by every clause, preserving their order.
func FilterDocuments(docs []Document, filters []EventFilter) ([]Document, error) {
	if err := ValidateEventFilters(filters); err != nil {
		return nil, err
	}
	texts := make([]*regexp.Regexp, len(filters))
	for i, f := range filters {
		if f.Kind != KindText {
			continue
		}
		re, err := CompileTextFilter(f.Text)
		if err != nil {
			return nil, err
		}
		texts[i] = re
	}
	out := []Document{}
	for _, d := range docs {
		if matchDocument(d, filters, texts) {
			out = append(out, d)
		}
	}
	return out, nil
}

func matchDocument(d Document, filters []EventFilter, texts []*regexp.Regexp) bool {
	for i, f := range filters {
		ok := false
		switch f.Kind {
		case KindSeq:
			ok = inRange(float64(d.Seq), f.From, f.To)
		case KindTime:
			ok = inRange(float64(d.Time), f.From, f.To)
		case KindType:
			ok = slices.Contains(f.Values, d.Type)
		case KindSurface:
			ok = slices.Contains(f.Values, d.Surface)
		case KindText:
			ok = texts[i].MatchString(d.Text)
		}
		if !ok {
			return false
		}
	}
	return true
}

func containsNullable(values []*string, v *string) bool {
	return slices.ContainsFunc(values, func(x *string) bool {
		if x == nil || v == nil {
			return x == nil && v == nil
		}
		return *x == *v
	})
}

func inRange(v float64, from, to *float64) bool {
	return (from == nil || v >= *from) && (to == nil || v <= *to)
}
