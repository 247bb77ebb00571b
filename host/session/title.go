package session

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Title is the folded title of a session: the last session/title event's
// payload plus that event's seq and time. JSON keys: title, messageSeqs,
// source, eventSeq, updatedAt.
type Title struct {
	Title       string          `json:"title"`
	MessageSeqs []int           `json:"messageSeqs"`
	Source      json.RawMessage `json:"source"`
	EventSeq    int             `json:"eventSeq"`
	UpdatedAt   int64           `json:"updatedAt"`
}

// TitleError reports a malformed session/title event. Callers that batch
// title reads (the query service) branch on it to reject one session without
// failing the batch.
type TitleError struct {
	Seq     int
	Message string
}

func (e *TitleError) Error() string {
	return fmt.Sprintf("session/title event %d is malformed: %s", e.Seq, e.Message)
}

// FoldTitle returns the last session/title of events (last wins), or nil
// when the log has none. The returned value shares nothing with events. A
// malformed last title is a *TitleError; earlier titles are not inspected.
func FoldTitle(events []Event) (*Title, error) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == TypeSessionTitle {
			return decodeTitle(events[i])
		}
	}
	return nil, nil
}

func decodeTitle(e Event) (*Title, error) {
	bad := func(msg string) (*Title, error) { return nil, &TitleError{Seq: e.Seq, Message: msg} }
	var probe struct {
		Title       json.RawMessage `json:"title"`
		MessageSeqs json.RawMessage `json:"messageSeqs"`
		Source      json.RawMessage `json:"source"`
	}
	if err := json.Unmarshal(e.Data, &probe); err != nil {
		return bad("data is not a JSON object")
	}
	var title string
	if len(probe.Title) == 0 || json.Unmarshal(probe.Title, &title) != nil {
		return bad("title must be a string")
	}
	if title == "" {
		return bad("title must not be empty")
	}
	if len(probe.MessageSeqs) == 0 {
		return bad("messageSeqs is missing")
	}
	seqs, why := decodeSeqList(probe.MessageSeqs)
	if why != seqListOK {
		return bad("messageSeqs must be an array of event seqs")
	}
	if err := checkTitleSource(probe.Source); err != "" {
		return bad(err)
	}
	return &Title{
		Title:       title,
		MessageSeqs: seqs,
		Source:      bytes.Clone(bytes.TrimSpace(probe.Source)),
		EventSeq:    e.Seq,
		UpdatedAt:   e.Time,
	}, nil
}

// checkTitleSource accepts {kind:"fallback"}, {kind:"user"} and
// {kind:"provider", provider, model?:{provider, model}}.
func checkTitleSource(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "source is missing"
	}
	var src struct {
		Kind     *string         `json:"kind"`
		Provider *string         `json:"provider"`
		Model    json.RawMessage `json:"model"`
	}
	if json.Unmarshal(raw, &src) != nil || bytes.TrimSpace(raw)[0] != '{' {
		return "source must be an object"
	}
	if src.Kind == nil {
		return "source.kind is missing"
	}
	switch *src.Kind {
	case TitleFallback, TitleUser:
		return ""
	case TitleProvider:
		if src.Provider == nil || *src.Provider == "" {
			return "source.provider must be a non-empty string"
		}
		if len(src.Model) > 0 {
			var m struct {
				Provider string `json:"provider"`
				Model    string `json:"model"`
			}
			if json.Unmarshal(src.Model, &m) != nil || m.Provider == "" || m.Model == "" {
				return "source.model must be {provider, model}"
			}
		}
		return ""
	default:
		return fmt.Sprintf("source.kind %q is not fallback, provider or user", *src.Kind)
	}
}
