package sessionquery

import (
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// foldEvents folds a whole log, reporting any violation as INVALID_SURFACE
// with the fold's own message.
func foldEvents(events []session.Event) (*session.SurfaceFold, error) {
	f, err := session.Fold(events)
	if err != nil {
		return nil, Wrap(CodeInvalidSurface, err, "invalid session surface: %s", err.Error())
	}
	return f, nil
}

// eventRecord returns the classified metadata of e, an event of the folded
// log.
func eventRecord(f *session.SurfaceFold, sessionID string, e session.Event) EventRecord {
	return EventRecord{SessionID: sessionID, Seq: e.Seq, Type: e.Type, Time: e.Time, Surface: f.Surface(e.Seq)}
}

// eventTrace returns the replacement and source relations of e, an event of
// the folded log. Every slice is fresh and non-nil.
func eventTrace(f *session.SurfaceFold, sessionID string, e session.Event) EventTrace {
	r, _ := f.Relations(e.Seq)
	return EventTrace{
		Target:            eventRecord(f, sessionID, e),
		ReplacedBy:        r.ReplacedBy,
		ReplacementChain:  nonNil(r.ReplacementChain),
		ReplacedEventSeqs: nonNil(r.ReplacedEventSeqs),
		SourceEventSeqs:   nonNil(r.SourceEventSeqs),
		DerivedEventSeqs:  nonNil(r.DerivedEventSeqs),
	}
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}
