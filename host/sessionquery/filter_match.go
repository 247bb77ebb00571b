package sessionquery

import "slices"

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
	texts := make([]*TextMatcher, len(filters))
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

func matchDocument(d Document, filters []EventFilter, texts []*TextMatcher) bool {
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
			ok = texts[i].Match(d.Text)
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
