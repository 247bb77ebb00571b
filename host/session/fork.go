package session

import (
	"errors"
	"fmt"
)

// ForkLatest asks Fork for the latest stable boundary: the whole log when
// no turn is open, otherwise everything before the open turn's turn/start.
// Forking while a turn runs therefore keeps every completed turn and never
// copies a half-written one.
const ForkLatest = -1

// Fork error codes.
const (
	ForkInvalidBoundary = "INVALID_BOUNDARY" // not an existing seq (or ForkLatest)
	ForkOpenTurn        = "OPEN_TURN"        // the prefix ends inside an open turn
	ForkInvalidSource   = "INVALID_SOURCE"   // the source log fails validation
	ForkInvalidChild    = "INVALID_CHILD"    // unusable child id or creation time
)

// ForkError is a refused fork; Code is one of the Fork* codes.
type ForkError struct {
	Code    string
	Message string
	Err     error
}

func (e *ForkError) Error() string { return e.Message }
func (e *ForkError) Unwrap() error { return e.Err }

// Fork builds a child session from a stable prefix of a source log
// (session-query.md §1.6). boundary is the inclusive last seq to copy, or
// ForkLatest. The seed is a deep copy of events 0..boundary that shares no
// bytes with the source; the child header has parentSession = the source id,
// seedLength = len(seed), the source's cwd, delegationDepth, agentPreset and
// owner (a fork runs in the same workspace, composition and identity
// partition as its source; it is a sibling branch, not a delegation).
//
// The child's first live write must be the session/end-seed marker; create
// the child Live with the returned header and seed, then call MarkEndSeed.
func Fork(src Header, events []Event, boundary int, childID string, createdAt int64) (Header, []Event, error) {
	switch {
	case childID == "":
		return Header{}, nil, &ForkError{Code: ForkInvalidChild, Message: "fork child session id must not be empty"}
	case childID == src.ID:
		return Header{}, nil, &ForkError{Code: ForkInvalidChild, Message: fmt.Sprintf("fork child session id %q is the source session id", childID)}
	case createdAt < 0 || createdAt > MaxSafeInteger:
		return Header{}, nil, &ForkError{Code: ForkInvalidChild, Message: fmt.Sprintf("fork child createdAt must be a non-negative safe integer, got %d", createdAt)}
	}
	end, err := forkEnd(src.ID, events, boundary)
	if err != nil {
		return Header{}, nil, err
	}
	if _, err := ValidateEvents(events[:end]); err != nil {
		return Header{}, nil, &ForkError{
			Code:    ForkInvalidSource,
			Message: fmt.Sprintf("cannot fork session %q: its log is invalid: %v", src.ID, err),
			Err:     err,
		}
	}
	seed := CloneEvents(events[:end])
	child := Header{
		Version:         FormatVersion,
		ID:              childID,
		CreatedAt:       createdAt,
		Cwd:             clonePtr(src.Cwd),
		DelegationDepth: Ptr(src.Depth()),
		ParentSession:   Ptr(src.ID),
		SeedLength:      Ptr(len(seed)),
		AgentPreset:     clonePtr(src.AgentPreset),
		Owner:           clonePtr(src.Owner),
	}
	return child, seed, nil
}

// forkEnd resolves boundary to the length of the seed.
func forkEnd(id string, events []Event, boundary int) (int, error) {
	if boundary == ForkLatest {
		return latestStableEnd(events), nil
	}
	if boundary < 0 {
		return 0, &ForkError{Code: ForkInvalidBoundary,
			Message: fmt.Sprintf("fork boundary for session %q must be a non-negative seq or ForkLatest, got %d", id, boundary)}
	}
	if boundary >= len(events) {
		last := "none"
		if len(events) > 0 {
			last = fmt.Sprint(len(events) - 1)
		}
		return 0, &ForkError{Code: ForkInvalidBoundary,
			Message: fmt.Sprintf("fork boundary %d does not exist in session %q (last seq: %s)", boundary, id, last)}
	}
	if events[boundary].Seq != boundary {
		return 0, &ForkError{Code: ForkInvalidBoundary,
			Message: fmt.Sprintf("fork boundary %d does not match a contiguous event seq in session %q", boundary, id)}
	}
	if open, turn := openTurnAt(events[:boundary+1]); open >= 0 {
		return 0, &ForkError{Code: ForkOpenTurn,
			Message: fmt.Sprintf("fork boundary %d in session %q ends inside open turn %d; fork at or after its turn/end, or before seq %d", boundary, id, turn, open)}
	}
	return boundary + 1, nil
}

// latestStableEnd is the seed length for ForkLatest.
func latestStableEnd(events []Event) int {
	if open, _ := openTurnAt(events); open >= 0 {
		return open
	}
	return len(events)
}

// openTurnAt returns the index and turn number of the turn/start that is
// still open at the end of events, or -1.
func openTurnAt(events []Event) (int, int) {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case TypeTurnEnd:
			return -1, 0
		case TypeTurnStart:
			var ts TurnStart
			_ = events[i].DecodeData(&ts)
			return i, ts.Turn
		}
	}
	return -1, 0
}

// MarkEndSeed appends the session/end-seed marker ({}) that closes a seed
// (fork, resume or replay), unless the log already ends with one: reopening
// an untouched session must not grow its log. It must be the first live
// write on l. It reports whether it appended.
func MarkEndSeed(l *Live) (bool, error) {
	if n := l.Len(); n > 0 {
		if last := l.Events(n - 1); len(last) == 1 && last[0].Type == TypeEndSeed {
			return false, nil
		}
	}
	if _, err := l.Append(TypeEndSeed, struct{}{}); err != nil {
		return false, fmt.Errorf("mark end of seed: %w", err)
	}
	return true, nil
}

// IsForkError reports whether err is a *ForkError with the given code.
func IsForkError(err error, code string) bool {
	var fe *ForkError
	return errors.As(err, &fe) && fe.Code == code
}
