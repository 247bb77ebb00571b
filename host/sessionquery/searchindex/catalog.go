package searchindex

import (
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// catalogEntry is what the catalog keeps of one log besides its header
// and search rows (see catalogColumns).
type catalogEntry struct {
	header      string  // the header's JSON
	title       *string // the folded title's JSON; nil when untitled
	titleErrSeq *int
	titleErr    *string
	lastEventAt int64
	logBytes    int64
	unreadable  string
	invalid     string
}

// catalogOf folds a log into its catalog entry.
func catalogOf(h session.Header, events []session.Event, logBytes int64) catalogEntry {
	c, _ := catalogFold(h, events, logBytes)
	return c
}

// catalogFold is catalogOf also returning the surface fold its
// validation built (nil when the log is invalid).
func catalogFold(h session.Header, events []session.Event, logBytes int64) (catalogEntry, *session.SurfaceFold) {
	c := catalogEntry{header: string(session.MustMarshal(h)), logBytes: logBytes}
	fold, err := session.ValidateLogFold(h, events)
	if err != nil {
		c.invalid = err.Error()
	}
	if n := len(events); n > 0 {
		c.lastEventAt = events[n-1].Time
	}
	t := foldTitleColumns(events)
	c.title, c.titleErrSeq, c.titleErr = t.title, t.errSeq, t.err
	return c, fold
}

// titleColumns are the catalog's title columns (see catalogColumns).
type titleColumns struct {
	title  *string // the folded title's JSON; nil when untitled
	errSeq *int
	err    *string
}

// foldTitleColumns folds events' title (the last session/title event
// decides) into the catalog's columns.
func foldTitleColumns(events []session.Event) titleColumns {
	var c titleColumns
	t, err := session.FoldTitle(events)
	var te *session.TitleError
	switch {
	case errors.As(err, &te):
		seq, msg := te.Seq, te.Message
		c.errSeq, c.err = &seq, &msg
	case err != nil:
		msg := err.Error()
		c.err = &msg
	case t != nil:
		if b, err := json.Marshal(t); err == nil {
			s := string(b)
			c.title = &s
		}
	}
	return c
}

// catalogNames are the catalog columns, in catalogColumns order.
const catalogNames = `header, title, title_error_seq, title_error, last_event_at, log_bytes, unreadable, invalid`

// args are the catalog columns' values, in catalogColumns order.
func (c catalogEntry) args() []any {
	return []any{c.header, c.title, c.titleErrSeq, c.titleErr, c.lastEventAt, c.logBytes, c.unreadable, c.invalid}
}

// summaryColumns selects a summary from persisted_sessions or
// live_sessions (same column names).
const summaryColumns = `header, event_count, title, title_error_seq, title_error, last_event_at, log_bytes, unreadable, invalid`

// scanSummaryWith reads one row selected with summaryColumns followed by
// extra columns.
func scanSummaryWith(rows interface{ Scan(...any) error }, extra ...any) (sessionquery.SessionSummary, error) {
	var (
		sum             sessionquery.SessionSummary
		header          string
		title, titleErr sql.NullString
		titleErrSeq     sql.NullInt64
	)
	dest := append([]any{&header, &sum.Events, &title, &titleErrSeq, &titleErr, &sum.LastEventAt, &sum.LogBytes, &sum.Unreadable, &sum.Invalid}, extra...)
	if err := rows.Scan(dest...); err != nil {
		return sum, err
	}
	if err := json.Unmarshal([]byte(header), &sum.Header); err != nil {
		return sum, err
	}
	switch {
	case titleErr.Valid && titleErrSeq.Valid:
		sum.TitleErr = &session.TitleError{Seq: int(titleErrSeq.Int64), Message: titleErr.String}
	case titleErr.Valid:
		sum.TitleErr = errors.New(titleErr.String)
	case title.Valid:
		var t session.Title
		if err := json.Unmarshal([]byte(title.String), &t); err != nil {
			return sum, err
		}
		sum.Title = &t
	}
	return sum, nil
}
