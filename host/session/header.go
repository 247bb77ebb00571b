package session

// FormatVersion is the only session format version this build reads or writes.
const FormatVersion = 0

// Header describes a session. It is stored as the first line of the log
// (with "type":"session" prepended by the store), never as an event.
// Optional fields are pointers so that "absent" and "empty" stay distinct.
type Header struct {
	Version         int     `json:"version"`
	ID              string  `json:"id"`
	CreatedAt       int64   `json:"createdAt"`
	Cwd             *string `json:"cwd,omitempty"`
	DelegationDepth *int    `json:"delegationDepth,omitempty"`
	ParentSession   *string `json:"parentSession,omitempty"`
	SeedLength      *int    `json:"seedLength,omitempty"`
	Origin          *string `json:"origin,omitempty"`
	AgentPreset     *string `json:"agentPreset,omitempty"`
	Owner           *string `json:"owner,omitempty"`
}

// Clone returns a deep copy of h.
func (h Header) Clone() Header {
	c := h
	c.Cwd = clonePtr(h.Cwd)
	c.DelegationDepth = clonePtr(h.DelegationDepth)
	c.ParentSession = clonePtr(h.ParentSession)
	c.SeedLength = clonePtr(h.SeedLength)
	c.Origin = clonePtr(h.Origin)
	c.AgentPreset = clonePtr(h.AgentPreset)
	c.Owner = clonePtr(h.Owner)
	return c
}

// CwdOrEmpty returns the workspace path, or "" when the session has none.
func (h Header) CwdOrEmpty() string {
	if h.Cwd == nil {
		return ""
	}
	return *h.Cwd
}

// Depth returns the delegation depth, treating absent as 0.
func (h Header) Depth() int {
	if h.DelegationDepth == nil {
		return 0
	}
	return *h.DelegationDepth
}

// Ptr returns a pointer to a copy of v; handy for optional header fields.
func Ptr[T any](v T) *T { return &v }

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Compatible reports whether two observations of a session header describe
// the same session (session-query.md §1.1): version, id, createdAt, cwd,
// parentSession, seedLength and delegationDepth (absent = 0) are equal.
// origin, agentPreset and owner are presentation or partition metadata and
// are not compared.
func Compatible(a, b Header) bool {
	return a.Version == b.Version &&
		a.ID == b.ID &&
		a.CreatedAt == b.CreatedAt &&
		equalPtr(a.Cwd, b.Cwd) &&
		equalPtr(a.ParentSession, b.ParentSession) &&
		equalPtr(a.SeedLength, b.SeedLength) &&
		a.Depth() == b.Depth()
}

// SameSnapshotHeader is the stricter equality used when retrying a
// snapshot observation: Compatible and the same agentPreset.
func SameSnapshotHeader(a, b Header) bool {
	return Compatible(a, b) && equalPtr(a.AgentPreset, b.AgentPreset)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
