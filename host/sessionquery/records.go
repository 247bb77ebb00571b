package sessionquery

import "github.com/seed-e9b4dba4/dsh/host/session"

// Event surfaces (the session fold's classification).
const (
	SurfaceCurrent  = session.SurfaceCurrent
	SurfaceShadowed = session.SurfaceShadowed
	SurfaceLogOnly  = session.SurfaceLogOnly
)

// SessionRecord is one session of the logical corpus.
type SessionRecord struct {
	Header    session.Header `json:"header"`
	Live      bool           `json:"live"`
	Persisted bool           `json:"persisted"`
}

// EventRecord is an event's metadata and classification.
type EventRecord struct {
	SessionID string `json:"sessionId"`
	Seq       int    `json:"seq"`
	Type      string `json:"type"`
	Time      int64  `json:"time"`
	Surface   string `json:"surface"`
}

// Document is an event's semantic text with its metadata.
type Document struct {
	EventRecord
	Text string `json:"text"`
}

// LogSnapshot is a whole session log.
type LogSnapshot struct {
	Session session.Header  `json:"session"`
	Events  []session.Event `json:"events"`
}

// SurfaceSnapshot is the current surface of a session.
type SurfaceSnapshot struct {
	Session            session.Header  `json:"session"`
	CapturedThroughSeq *int            `json:"capturedThroughSeq"`
	Events             []session.Event `json:"events"`
}

// EventWindow is a target event with a contiguous raw window around it.
type EventWindow struct {
	Session  session.Header  `json:"session"`
	Target   session.Event   `json:"target"`
	Events   []session.Event `json:"events"`
	StartSeq int             `json:"startSeq"`
	EndSeq   int             `json:"endSeq"`
}

// EventTrace is the replacement and source relations of one event.
type EventTrace struct {
	Target            EventRecord `json:"target"`
	ReplacedBy        *int        `json:"replacedBy,omitempty"`
	ReplacementChain  []int       `json:"replacementChain"`
	ReplacedEventSeqs []int       `json:"replacedEventSeqs"`
	SourceEventSeqs   []int       `json:"sourceEventSeqs"`
	DerivedEventSeqs  []int       `json:"derivedEventSeqs"`
}

// EventTraceObservation is an EventTrace with the header it was read from.
type EventTraceObservation struct {
	EventTrace
	Session session.Header `json:"session"`
}

// LineageNode is one descendant with its own descendants.
type LineageNode struct {
	Session     SessionRecord `json:"session"`
	Descendants []LineageNode `json:"descendants"`
}

// LineageTrace is the lineage around one session. Root is set iff Complete;
// UnresolvedParentID iff not.
type LineageTrace struct {
	Target             SessionRecord   `json:"target"`
	Ancestors          []SessionRecord `json:"ancestors"`
	Descendants        []LineageNode   `json:"descendants"`
	Complete           bool            `json:"complete"`
	Root               *SessionRecord  `json:"root,omitempty"`
	UnresolvedParentID *string         `json:"unresolvedParentId,omitempty"`
}

// TitleSnapshot is the folded title of a session (the last session/title
// event's payload with that event's seq and time).
type TitleSnapshot = session.Title

// TitleObservation is a header with its title (nil when untitled).
type TitleObservation struct {
	Session session.Header `json:"session"`
	Title   *TitleSnapshot `json:"title,omitempty"`
}

// Title batch result statuses.
const (
	Fulfilled = "fulfilled"
	Rejected  = "rejected"
)

// TitleResult is the outcome for one id of a title batch.
type TitleResult struct {
	SessionID string
	Status    string
	Value     *TitleObservation
	Reason    error
}
