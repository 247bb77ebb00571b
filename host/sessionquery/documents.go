package sessionquery

import "github.com/seed-e9b4dba4/dsh/host/session"

// BuildDocuments folds a whole log and returns one semantic document per
// event whose extracted text is non-empty, in ascending seq order. A fold
// violation fails with INVALID_SURFACE: a document's surface is meaningless
// on a log whose surface is invalid.
func BuildDocuments(sessionID string, events []session.Event) ([]Document, error) {
	f, err := foldEvents(events)
	if err != nil {
		return nil, err
	}
	return FoldedDocuments(sessionID, events, f), nil
}

// FoldedDocuments is BuildDocuments for a log already folded: f must be
// the fold of exactly these events (session.Fold, or the fold
// session.ValidateLogFold returns), so a reader that validates a log
// folds it once.
func FoldedDocuments(sessionID string, events []session.Event, f *session.SurfaceFold) []Document {
	docs := []Document{}
	var x textScanner
	for _, e := range events {
		text := x.text(e)
		if text == "" {
			continue
		}
		docs = append(docs, Document{EventRecord: eventRecord(f, sessionID, e), Text: text})
	}
	return docs
}

// AppendedDocuments is FoldedDocuments for events appended to a log whose
// earlier documents are already built, with each appended event's surface
// given (session.AppendedSurfaces): the same documents a whole fold would
// give those events.
func AppendedDocuments(sessionID string, events []session.Event, surfaces []string) []Document {
	docs := []Document{}
	var x textScanner
	for i, e := range events {
		text := x.text(e)
		if text == "" {
			continue
		}
		docs = append(docs, Document{EventRecord: EventRecord{SessionID: sessionID, Seq: e.Seq, Type: e.Type, Time: e.Time, Surface: surfaces[i]}, Text: text})
	}
	return docs
}

// ClassifyEvents folds a whole log and returns every event's metadata with
// its surface classification, in ascending seq order.
func ClassifyEvents(sessionID string, events []session.Event) ([]EventRecord, error) {
	f, err := foldEvents(events)
	if err != nil {
		return nil, err
	}
	out := make([]EventRecord, len(events))
	for i, e := range events {
		out[i] = eventRecord(f, sessionID, e)
	}
	return out, nil
}
