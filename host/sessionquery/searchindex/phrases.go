package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
)

// Phrase statistics: the document frequency of phrases of tracked terms
// that searches needed it for, kept exact by every write.
//
// A query of several phrases (a camel-case identifier: its parts OR its
// whole, see quoteFTS) ranks by each phrase's idf, so it needs the number
// of documents holding each phrase. A tracked term's is the sum of its
// summaries' counts and a rare phrase's is the number of its matches, read
// anyway; but a phrase of several tracked terms ("parse workspace
// manifest") is found by intersecting their long position lists, which
// costs most of such a search. The first search that needs a phrase's
// frequency counts it once, in a write transaction, and records it here;
// from then on every write adds and subtracts the documents it inserts
// and removes that hold the phrase, so the count stays exact across
// writes by any process, and later searches read it. At most maxPhrases
// are kept, the oldest dropped first.
const maxPhrases = 64

// phraseKey is a phrase's tokens joined by spaces (tokens hold none).
func phraseKey(tokens []string) string { return strings.Join(tokens, " ") }

// cachedPhrases are the recorded phrases as one transaction read them.
type cachedPhrases struct {
	version int64
	keys    []string
	tokens  [][]string
}

// loadPhrases returns the recorded phrases, reading them again only when
// a search recorded or dropped one since (phrases_version).
func loadPhrases(ctx context.Context, q querier, cached *cachedPhrases) (*cachedPhrases, error) {
	var version int64
	if err := q.QueryRowContext(ctx, `SELECT phrases_version FROM search_state WHERE singleton = 1`).Scan(&version); err != nil {
		return nil, err
	}
	if cached != nil && cached.version == version {
		return cached, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT phrase FROM phrase_stats ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p := &cachedPhrases{version: version}
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, err
		}
		p.keys = append(p.keys, key)
		p.tokens = append(p.tokens, strings.Split(key, " "))
	}
	return p, rows.Err()
}

// countDoc counts, per recorded phrase, the documents of toks (one
// document's tokens) that hold it, into delta.
func (p *cachedPhrases) countDoc(toks []searchtext.Token, sign int64, delta map[string]int64) {
	for i, tokens := range p.tokens {
		if countPhrase(toks, tokens) > 0 {
			delta[p.keys[i]] += sign
		}
	}
}

// addDocs counts the recorded phrases in rows, documents of one session
// whose terms are st: a session that lacks one of a phrase's terms is not
// tokenized for it.
func (p *cachedPhrases) addDocs(rows []docRow, st *sessionTerms, sc *termScratch, delta map[string]int64) {
	var need []int
	for i, tokens := range p.tokens {
		all := true
		for _, t := range tokens {
			if _, ok := st.find(t); !ok {
				all = false
				break
			}
		}
		if all {
			need = append(need, i)
		}
	}
	if len(need) == 0 {
		return
	}
	for _, r := range rows {
		sc.toks = searchtext.Tokens(sc.toks[:0], r.form)
		for _, i := range need {
			if countPhrase(sc.toks, p.tokens[i]) > 0 {
				delta[p.keys[i]]++
			}
		}
	}
}

// flushPhrases applies the documents counted in and out of the recorded
// phrases.
func flushPhrases(ctx context.Context, c *sql.Conn, delta map[string]int64) error {
	for key, d := range delta {
		if d == 0 {
			continue
		}
		if _, err := c.ExecContext(ctx, `UPDATE phrase_stats SET df = df + ? WHERE phrase = ?`, d, key); err != nil {
			return err
		}
	}
	return nil
}

// phraseDF returns a recorded phrase's document frequency.
func phraseDF(ctx context.Context, q querier, tokens []string) (int64, bool, error) {
	var df int64
	err := q.QueryRowContext(ctx, `SELECT df FROM phrase_stats WHERE phrase = ?`, phraseKey(tokens)).Scan(&df)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return df, err == nil, err
}

// recordPhrase counts a phrase's documents and records it, in the caller's
// write transaction (so no write can slip between the count and the
// record), dropping the oldest recorded phrase past maxPhrases.
func recordPhrase(ctx context.Context, c *sql.Conn, match string, tokens []string) error {
	if _, ok, err := phraseDF(ctx, c, tokens); ok || err != nil {
		return err
	}
	var df int64
	if err := c.QueryRowContext(ctx, `SELECT count(*) FROM persisted_fts WHERE persisted_fts MATCH ?`, match).Scan(&df); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, `INSERT INTO phrase_stats(phrase, df) VALUES (?, ?)`, phraseKey(tokens), df); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, `DELETE FROM phrase_stats WHERE id NOT IN (SELECT id FROM phrase_stats ORDER BY id DESC LIMIT ?)`, maxPhrases); err != nil {
		return err
	}
	_, err := c.ExecContext(ctx, `UPDATE search_state SET phrases_version = phrases_version + 1 WHERE singleton = 1`)
	return err
}
