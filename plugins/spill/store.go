package spill

import "context"

// RetrievalHint tells the model how to read a spilled result back.
const RetrievalHint = "Use read with offset/limit, or grep this path to search within it."

// Store persists the full text of an oversized result. SaveText must store
// Content verbatim and fail on any real storage failure; it owns no
// retention or replacement policy.
type Store interface {
	SaveText(ctx context.Context, req SaveRequest) (Ref, error)
}

// SaveRequest is one result to spill. SessionID namespaces the file;
// ToolName, CallID and Label describe its source and are not access control;
// SuggestedName is a hint for the file name, never a path.
type SaveRequest struct {
	SessionID     string
	ToolName      string
	CallID        string
	Label         string
	SuggestedName string
	Content       string
}

// Ref is where a spilled result went. Locator is shown to the model as is.
type Ref struct {
	Locator       string
	Bytes         int
	RetrievalHint string
}
