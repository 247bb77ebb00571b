package searchindex

import (
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// sessionsRequest is a validated, deep-copied SessionSearchRequest: what a
// search works from once it is queued, whatever the caller does with its
// own request afterwards.
type sessionsRequest struct {
	query          string
	sessionFilters []sessionquery.SessionFilter
	eventFilters   []sessionquery.EventFilter
	limit          int
	cursor         *string
}

// eventsRequest is a validated, deep-copied EventSearchRequest.
type eventsRequest struct {
	sessionID string
	query     string
	filters   []sessionquery.EventFilter
	limit     int
	cursor    *string
}

func (c Config) normalizeSessions(req sessionquery.SessionSearchRequest) (sessionsRequest, error) {
	q, err := normalizeQuery(req.Query)
	if err != nil {
		return sessionsRequest{}, err
	}
	if err := sessionquery.ValidateSearchSessionFilters(req.SessionFilters); err != nil {
		return sessionsRequest{}, err
	}
	if err := sessionquery.ValidateMetadataFilters(req.EventFilters); err != nil {
		return sessionsRequest{}, err
	}
	limit, err := c.normalizeLimit(req.Limit)
	if err != nil {
		return sessionsRequest{}, err
	}
	out := sessionsRequest{
		query:          q,
		sessionFilters: sessionquery.CopySessionFilters(req.SessionFilters),
		eventFilters:   sessionquery.CopyEventFilters(req.EventFilters),
		limit:          limit,
		cursor:         copyString(req.Cursor),
	}
	if out.sessionFilters == nil {
		out.sessionFilters = []sessionquery.SessionFilter{}
	}
	if out.eventFilters == nil {
		out.eventFilters = []sessionquery.EventFilter{}
	}
	return out, nil
}

func (c Config) normalizeEvents(req sessionquery.EventSearchRequest) (eventsRequest, error) {
	q, err := normalizeQuery(req.Query)
	if err != nil {
		return eventsRequest{}, err
	}
	if err := sessionquery.ValidateMetadataFilters(req.Filters); err != nil {
		return eventsRequest{}, err
	}
	limit, err := c.normalizeLimit(req.Limit)
	if err != nil {
		return eventsRequest{}, err
	}
	out := eventsRequest{
		sessionID: req.SessionID,
		query:     q,
		filters:   sessionquery.CopyEventFilters(req.Filters),
		limit:     limit,
		cursor:    copyString(req.Cursor),
	}
	if out.filters == nil {
		out.filters = []sessionquery.EventFilter{}
	}
	return out, nil
}

// normalizeQuery trims the query, collapses its whitespace runs to single
// spaces and rejects blank or NUL-carrying text. Invalid UTF-8 (for example
// a lone surrogate decoded leniently) becomes U+FFFD, and so do the two
// highlight markers, so that a query can never forge one.
// MaxQueryBytes bounds a normalized query. A phrase query's cost grows with
// its tokens; a query beyond a few kilobytes is a pasted document, not a
// search, and would hold the single index connection for seconds.
const MaxQueryBytes = 8192

func normalizeQuery(q string) (string, error) {
	q = strings.ToValidUTF8(q, "\uFFFD")
	q = sessionquery.CollapseJS(q)
	if q == "" {
		return "", sessionquery.Errorf(sessionquery.CodeInvalidQuery, "session-search query must contain non-whitespace text")
	}
	if strings.ContainsRune(q, 0) {
		return "", sessionquery.Errorf(sessionquery.CodeInvalidQuery, "session-search query must not contain NUL")
	}
	if len(q) > MaxQueryBytes {
		return "", sessionquery.Errorf(sessionquery.CodeInvalidQuery,
			"session-search query is too long (%d bytes after collapsing whitespace; at most %d): search for a distinctive part of it", len(q), MaxQueryBytes)
	}
	return strings.NewReplacer(string(markStart), "\uFFFD", string(markEnd), "\uFFFD").Replace(q), nil
}

func (c Config) normalizeLimit(limit *int) (int, error) {
	if limit == nil {
		return c.DefaultLimit, nil
	}
	max := min(c.MaxLimit, maxLimitBound)
	if *limit < 1 || *limit > max {
		return 0, sessionquery.Errorf(sessionquery.CodeInvalidLimit, "session-search limit must be an integer between 1 and %d", max)
	}
	return *limit, nil
}

// quoteFTS makes the query, in its indexed form (searchtext.Query: CJK
// characters and identifier parts are tokens of their own), one FTS5
// string: every operator, prefix star, parenthesis and quote inside it is
// inert data. A query holding a camel-case identifier is two such strings,
// the parts form OR the whole form (searchtext.Whole), so the identifier
// is found however a document cases it, and exactly first.
func quoteFTS(q string) string {
	parts, whole := searchtext.Query(q), searchtext.Whole(q)
	if parts == whole {
		return quotePhrase(parts)
	}
	return quotePhrase(parts) + " OR " + quotePhrase(whole)
}

func quotePhrase(p string) string {
	return `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
}

// phraseForms returns the phrases of a quoteFTS expression, unquoted.
func phraseForms(match string) []string {
	out := matchPhrases(match)
	for i, p := range out {
		out[i] = strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
	}
	return out
}

// matchPhrases splits a quoteFTS expression into its quoted phrases.
func matchPhrases(match string) []string {
	var out []string
	for len(match) > 0 {
		end := 1
		for end < len(match) {
			if match[end] == '"' {
				if end+1 < len(match) && match[end+1] == '"' {
					end += 2
					continue
				}
				break
			}
			end++
		}
		out = append(out, match[:end+1])
		match = strings.TrimPrefix(match[min(end+1, len(match)):], " OR ")
	}
	return out
}

func copyString(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
