package sessionquery

import "context"

// snapshotLookup is the optional capability that finds one persisted
// session without listing every log (issue 15): Snapshot reports what List
// would have listed for id, and found is false where List would not list it
// (no log, or a header List skips as unreadable).
type snapshotLookup interface {
	Snapshot(ctx context.Context, id string) (snap PersistedSnapshot, found bool, err error)
}

// findPersisted returns the listed header of id: by the one-id lookup when
// p offers it, else by listing every log (the design's path for
// persistence without the capability).
func findPersisted(ctx context.Context, p Persistence, id string) (PersistedSnapshot, bool, error) {
	if l, ok := p.(snapshotLookup); ok {
		snap, found, err := l.Snapshot(ctx, id)
		if err != nil {
			if cause := cancelled(ctx); cause != nil {
				return PersistedSnapshot{}, false, cause
			}
			return PersistedSnapshot{}, false, Wrap(CodePersistenceFailed, err, "session persistence listing failed: %s", errorMessage(err))
		}
		return snap, found && snap.Header.ID == id, nil
	}
	snaps, err := listPersisted(ctx, p)
	if err != nil {
		return PersistedSnapshot{}, false, err
	}
	h, ok := findSnapshot(snaps, id)
	return PersistedSnapshot{Header: h}, ok, nil
}
