package searchindex

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

const (
	cursorVersion  = 1
	scopeSessions  = "sessions"
	scopeEvents    = "events"
	maxSafeInteger = 1<<53 - 1
)

// cursorPayload is the decoded form of an opaque cursor: base64url (no
// padding) of this JSON. The fingerprint is the SHA-256 of the normalized
// request's canonical JSON, which keeps cursors short however many filter
// values the request carries.
type cursorPayload struct {
	Version     int    `json:"version"`
	Instance    string `json:"instance"`
	Scope       string `json:"scope"`
	Fingerprint string `json:"fingerprint"`
	Generation  string `json:"generation"`
	Offset      int64  `json:"offset"`
}

func encodeCursor(p cursorPayload) string {
	raw := session.MustMarshal(p)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeCursor checks a cursor against the request it continues. Everything
// but the generation is INVALID_CURSOR; a generation mismatch, checked last,
// is STALE_CURSOR.
func decodeCursor(cursor, instance, scope, fingerprint, generation string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, invalidCursor()
	}
	var v struct {
		Version     *json.Number `json:"version"`
		Instance    *string      `json:"instance"`
		Scope       *string      `json:"scope"`
		Fingerprint *string      `json:"fingerprint"`
		Generation  *string      `json:"generation"`
		Offset      *json.Number `json:"offset"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return 0, invalidCursor()
	}
	if v.Version == nil || v.Version.String() != strconv.Itoa(cursorVersion) ||
		v.Instance == nil || *v.Instance != instance ||
		v.Scope == nil || *v.Scope != scope ||
		v.Fingerprint == nil || *v.Fingerprint != fingerprint ||
		v.Generation == nil || v.Offset == nil {
		return 0, invalidCursor()
	}
	offset, err := strconv.ParseInt(v.Offset.String(), 10, 64)
	if err != nil || offset < 0 || offset > maxSafeInteger {
		return 0, invalidCursor()
	}
	if *v.Generation != generation {
		return 0, staleCursor()
	}
	return offset, nil
}

// canonicalFilter is a filter in canonical form: list values sorted (null
// first), ranges with explicit nulls.
type canonicalFilter struct {
	Kind     string
	Values   []*string
	From, To *float64
	ranged   bool
}

func (f canonicalFilter) MarshalJSON() ([]byte, error) {
	if f.ranged {
		return session.Marshal(struct {
			Kind string   `json:"kind"`
			From *float64 `json:"from"`
			To   *float64 `json:"to"`
		}{f.Kind, f.From, f.To})
	}
	values := f.Values
	if values == nil {
		values = []*string{}
	}
	return session.Marshal(struct {
		Kind   string    `json:"kind"`
		Values []*string `json:"values"`
	}{f.Kind, values})
}

func sessionsFingerprint(r sessionsRequest) string {
	var sf, ef []canonicalFilter
	for _, f := range r.sessionFilters {
		switch f.Kind {
		case sessionquery.KindCreatedAt:
			sf = append(sf, canonicalFilter{Kind: f.Kind, From: f.From, To: f.To, ranged: true})
		case sessionquery.KindCwd, sessionquery.KindParent:
			sf = append(sf, canonicalFilter{Kind: f.Kind, Values: f.NullableValues})
		default:
			sf = append(sf, canonicalFilter{Kind: f.Kind, Values: ptrs(f.Values)})
		}
	}
	for _, f := range r.eventFilters {
		ef = append(ef, canonicalEvent(f))
	}
	return fingerprint(struct {
		Scope          string            `json:"scope"`
		Query          string            `json:"query"`
		SessionFilters []json.RawMessage `json:"sessionFilters"`
		EventFilters   []json.RawMessage `json:"eventFilters"`
		Limit          int               `json:"limit"`
	}{scopeSessions, r.query, canonicalList(sf), canonicalList(ef), r.limit})
}

func eventsFingerprint(r eventsRequest) string {
	var ef []canonicalFilter
	for _, f := range r.filters {
		ef = append(ef, canonicalEvent(f))
	}
	return fingerprint(struct {
		Scope     string            `json:"scope"`
		SessionID string            `json:"sessionId"`
		Query     string            `json:"query"`
		Filters   []json.RawMessage `json:"filters"`
		Limit     int               `json:"limit"`
	}{scopeEvents, r.sessionID, r.query, canonicalList(ef), r.limit})
}

func canonicalEvent(f sessionquery.EventFilter) canonicalFilter {
	if f.Kind == sessionquery.KindSeq || f.Kind == sessionquery.KindTime {
		return canonicalFilter{Kind: f.Kind, From: f.From, To: f.To, ranged: true}
	}
	return canonicalFilter{Kind: f.Kind, Values: ptrs(f.Values)}
}

// canonicalList sorts each filter's values (null first, then strings in
// locale order with byte order breaking collation ties) and then the
// filters by their JSON text.
func canonicalList(filters []canonicalFilter) []json.RawMessage {
	c := collate.New(language.Und)
	out := make([]json.RawMessage, 0, len(filters))
	for _, f := range filters {
		if !f.ranged {
			values := slices.Clone(f.Values)
			slices.SortFunc(values, func(a, b *string) int {
				switch {
				case a == nil && b == nil:
					return 0
				case a == nil:
					return -1
				case b == nil:
					return 1
				}
				if n := c.CompareString(*a, *b); n != 0 {
					return n
				}
				return strings.Compare(*a, *b)
			})
			f.Values = values
		}
		out = append(out, session.MustMarshal(f))
	}
	slices.SortFunc(out, func(a, b json.RawMessage) int { return bytes.Compare(a, b) })
	return out
}

func fingerprint(v any) string {
	sum := sha256.Sum256(session.MustMarshal(v))
	return hex.EncodeToString(sum[:])
}

func ptrs(values []string) []*string {
	out := make([]*string, len(values))
	for i := range values {
		out[i] = &values[i]
	}
	return out
}
