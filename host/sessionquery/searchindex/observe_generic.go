package searchindex

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// observeGeneric is the reconciliation of a persistence backend without a
// change feed (session-query.md §3.7): list, inspect what changed, list
// again, and retry when the two listings or the binding differ. Everything
// it found is written in the final transaction.
func (ix *Index) observeGeneric(ctx context.Context, b sessionquery.Binding, canReuse bool, l0 []liveRef, bt *batch) (persistedView, bool, error) {
	p := b.Persistence
	indexed, err := ix.indexedRevisions(ctx)
	if err != nil {
		return nil, false, err
	}
	before, err := p.List(ctx)
	if err == nil {
		err = checkSnapshots(before)
	}
	if err != nil {
		retry, err := ix.backendFailure(ctx, b, err)
		return nil, retry, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, false, err
	}
	var changes []persistedChange
	for _, snap := range before {
		id := snap.Header.ID
		if rev, ok := indexed[id]; ok && canReuse && rev == snap.Revision {
			continue
		}
		if ix.isLive(l0, id) {
			continue
		}
		c, retry, err := ix.inspect(ctx, b, snap, indexed[id])
		if err != nil || retry {
			return nil, retry, err
		}
		changes = append(changes, c)
	}
	after, err := p.List(ctx)
	if err == nil {
		err = checkSnapshots(after)
	}
	if err != nil {
		retry, err := ix.backendFailure(ctx, b, err)
		return nil, retry, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, false, err
	}
	if !sameSnapshots(before, after) || ix.svc.Binding().ID != b.ID {
		return nil, true, nil
	}
	listed := make(listedView, len(before))
	for i := range before {
		listed[before[i].Header.ID] = &before[i].Header
	}
	for _, c := range changes {
		bt.addUpsert(c)
	}
	for id := range indexed {
		if _, ok := listed[id]; !ok {
			bt.deletes = append(bt.deletes, id)
		}
	}
	return listed, false, nil
}

// listedView answers from one listing (its snapshots' headers); every
// live row is re-checked against it, as each search observes the backend
// afresh.
type listedView map[string]*session.Header

func (v listedView) lookup(_ context.Context, id string) (session.Header, bool, error) {
	if h, ok := v[id]; ok {
		return *h, true, nil
	}
	return session.Header{}, false, nil
}
func (listedView) changed(string) bool { return true }

func sameSnapshots(a, b []sessionquery.PersistedSnapshot) bool {
	if len(a) != len(b) {
		return false
	}
	byID := make(map[string]sessionquery.PersistedSnapshot, len(a))
	for _, s := range a {
		byID[s.Header.ID] = s
	}
	for _, s := range b {
		o, ok := byID[s.Header.ID]
		if !ok || o.Revision != s.Revision || !session.SameSnapshotHeader(o.Header, s.Header) {
			return false
		}
	}
	return true
}
