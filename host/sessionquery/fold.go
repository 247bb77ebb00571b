package sessionquery

import (
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// foldView is one surface fold of a log as this package consumes it.
type foldView struct {
	nodes      []int         // the current surface, in model order
	surfaces   []string      // classification per seq
	replacedBy map[int]int   // shadowed seq -> the seq that replaced it
	replaced   map[int][]int // replacing seq -> the seqs it shadowed
}

// foldEvents folds a whole log, reporting any violation as INVALID_SURFACE.
func foldEvents(events []session.Event) (*foldView, error) {
	nodes, reps, err := foldSurface(events)
	if err != nil {
		return nil, Wrap(CodeInvalidSurface, err, "invalid session surface: %s", err.Error())
	}
	v := &foldView{
		nodes:      nodes,
		surfaces:   make([]string, len(events)),
		replacedBy: map[int]int{},
		replaced:   map[int][]int{},
	}
	for i := range v.surfaces {
		v.surfaces[i] = SurfaceLogOnly
	}
	for _, r := range reps {
		v.replaced[r.seq] = r.shadowed
		for _, s := range r.shadowed {
			v.replacedBy[s] = r.seq
			v.surfaces[s] = SurfaceShadowed
		}
	}
	for _, n := range nodes {
		v.surfaces[n] = SurfaceCurrent
	}
	return v, nil
}

// record returns the classified metadata of events[seq].
func (v *foldView) record(sessionID string, e session.Event) EventRecord {
	return EventRecord{SessionID: sessionID, Seq: e.Seq, Type: e.Type, Time: e.Time, Surface: v.surfaces[e.Seq]}
}
