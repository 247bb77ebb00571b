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
	docs := []Document{}
	var x textScanner
	for _, e := range events {
		text := x.text(e)
		if text == "" {
			continue
		}
		docs = append(docs, Document{EventRecord: eventRecord(f, sessionID, e), Text: text})
	}
	return docs, nil
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
