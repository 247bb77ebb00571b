package session

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Surfaces of an event: current (in the final surface), shadowed (removed by
// a replacement) or log-only (never a surface node; every non-surface event).
const (
	SurfaceCurrent  = "current"
	SurfaceShadowed = "shadowed"
	SurfaceLogOnly  = "log-only"
)

type surfaceClass uint8

const (
	classLogOnly surfaceClass = iota
	classCurrent
	classShadowed
)

func (c surfaceClass) String() string {
	switch c {
	case classCurrent:
		return SurfaceCurrent
	case classShadowed:
		return SurfaceShadowed
	default:
		return SurfaceLogOnly
	}
}

// Replacement is one positional replace observed by the fold: the event Seq
// replaced the surface range declared as Start..End, removing Shadowed (the
// nodes actually in that range, in surface order).
type Replacement struct {
	Seq      int   `json:"seq"`
	Start    int   `json:"start"`
	End      int   `json:"end"`
	Shadowed []int `json:"shadowedSeqs"`
}

// FoldError is a surface-fold violation. Seq is the log index of the
// offending event; Message is the stable, user-facing description that the
// query layer reports as "invalid session surface: <Message>".
type FoldError struct {
	Seq     int
	Message string
}

func (e *FoldError) Error() string { return e.Message }

// SurfaceFold is the result of replaying a log's surface operations: the
// current surface in model order, every replacement in event order, the
// classification of each event and the indexes behind event tracing.
//
// A fold can be extended one event at a time with Append, which validates
// the event exactly as Fold would and leaves the fold unchanged on error. It
// is not safe to Append concurrently with other calls; once no goroutine
// appends, any number may read it.
type SurfaceFold struct {
	events       []Event
	nodes        []int
	replacements []Replacement
	class        []surfaceClass
	sources      [][]int     // decoded sourceEventSeqs per event; nil when absent
	replacedBy   map[int]int // shadowed seq -> replacing seq
	replacerOf   map[int]int // replacing seq -> index in replacements

	mu      sync.Mutex
	derived *derivedIndex // built on first trace, dropped by Append
}

// NewSurfaceFold returns the fold of an empty log.
func NewSurfaceFold() *SurfaceFold {
	return &SurfaceFold{replacedBy: map[int]int{}, replacerOf: map[int]int{}}
}

// Fold replays events (which must be the whole log from seq 0) through the
// surface rules of session-query.md §1.4. Any violation rejects the whole
// log with a *FoldError. The fold keeps a reference to events; callers must
// not modify them afterwards.
func Fold(events []Event) (*SurfaceFold, error) { return foldEvents(events, nil) }

// foldEvents folds events, running check (when set) on each event before
// the surface rules.
func foldEvents(events []Event, check func(i int, e Event) error) (*SurfaceFold, error) {
	f := NewSurfaceFold()
	f.class = make([]surfaceClass, 0, len(events))
	f.sources = make([][]int, 0, len(events))
	for i := range events {
		if check != nil {
			if err := check(i, events[i]); err != nil {
				return nil, err
			}
		}
		p, err := f.plan(events[i])
		if err != nil {
			return nil, err
		}
		// A capacity-clipped view shares the caller's events without copying
		// them, and a later Append reallocates instead of writing into them.
		f.events = events[: i+1 : i+1]
		f.commit(p)
	}
	return f, nil
}

// Append validates e as the next event of the log and folds it in. On error
// the fold is unchanged.
func (f *SurfaceFold) Append(e Event) error {
	p, err := f.plan(e)
	if err != nil {
		return err
	}
	f.events = append(f.events, e)
	f.commit(p)
	return nil
}

// Len returns the number of folded events.
func (f *SurfaceFold) Len() int { return len(f.events) }

// Event returns the folded event with the given seq.
func (f *SurfaceFold) Event(seq int) (Event, bool) {
	if seq < 0 || seq >= len(f.events) {
		return Event{}, false
	}
	return f.events[seq], true
}

// Nodes returns a copy of the current surface: node seqs in model order.
func (f *SurfaceFold) Nodes() []int { return slices.Clone(f.nodes) }

// Replacements returns a deep copy of the replacements in event order.
func (f *SurfaceFold) Replacements() []Replacement {
	out := make([]Replacement, len(f.replacements))
	for i, r := range f.replacements {
		r.Shadowed = slices.Clone(r.Shadowed)
		out[i] = r
	}
	return out
}

// Generation counts the replacements folded so far. A cache of derived
// history keyed on it must be rebuilt when it changes, because a replace
// rewrites the middle of the surface rather than extending it.
func (f *SurfaceFold) Generation() int { return len(f.replacements) }

// Surface classifies the event seq as SurfaceCurrent, SurfaceShadowed or
// SurfaceLogOnly; it returns "" when seq is not in the log.
func (f *SurfaceFold) Surface(seq int) string {
	if seq < 0 || seq >= len(f.class) {
		return ""
	}
	return f.class[seq].String()
}

// Surfaces returns the classification of every event, indexed by seq.
func (f *SurfaceFold) Surfaces() []string {
	out := make([]string, len(f.class))
	for i, c := range f.class {
		out[i] = c.String()
	}
	return out
}

type planKind uint8

const (
	planLogOnly planKind = iota
	planAppend
	planReplace
)

// plan is a validated transition that has not yet touched the fold.
type plan struct {
	kind             planKind
	op               SurfaceOp
	startIdx, endIdx int
	sources          []int
}

func (f *SurfaceFold) plan(e Event) (plan, error) { return planEvent(len(f.events), e, f) }

// errNeedsSurface is planEvent's answer for a replace without a fold.
var errNeedsSurface = errors.New("a replace needs the current surface")

// planEvent plans e as event i of a log folded by f. With a nil f (the log
// before i unknown) a replace fails with errNeedsSurface.
func planEvent(i int, e Event, f *SurfaceFold) (plan, error) {
	if e.Seq != i {
		return plan{}, &FoldError{Seq: i, Message: fmt.Sprintf("session event seq %d is not contiguous; expected %d", e.Seq, i)}
	}
	if !IsSurfaceType(e.Type) {
		if len(e.SurfaceOp) > 0 {
			return plan{}, eventErr(i, e, "is not surface-eligible and cannot carry surfaceOp")
		}
		if len(e.SourceEventSeqs) > 0 {
			return plan{}, eventErr(i, e, "is not surface-eligible and cannot carry sourceEventSeqs")
		}
		return plan{kind: planLogOnly}, nil
	}
	if len(e.SurfaceOp) == 0 {
		return plan{}, eventErr(i, e, "is surface-eligible and requires a surfaceOp")
	}
	op, err := e.Op()
	if err != nil {
		return plan{}, eventErr(i, e, "carries an invalid surfaceOp: "+err.Error())
	}
	p := plan{kind: planAppend, op: op}
	var shadowed []int
	if op.Replace {
		if f == nil {
			return plan{}, errNeedsSurface
		}
		p.kind = planReplace
		p.startIdx = slices.Index(f.nodes, op.Start)
		if p.startIdx < 0 {
			return plan{}, eventErr(i, e, fmt.Sprintf("replaces from start seq %d, which is not in the current surface", op.Start))
		}
		p.endIdx = slices.Index(f.nodes, op.End)
		if p.endIdx < 0 {
			return plan{}, eventErr(i, e, fmt.Sprintf("replaces through end seq %d, which is not in the current surface", op.End))
		}
		if p.startIdx > p.endIdx {
			return plan{}, eventErr(i, e, fmt.Sprintf("replaces from start seq %d (surface position %d), which comes after end seq %d (surface position %d)",
				op.Start, p.startIdx, op.End, p.endIdx))
		}
		shadowed = f.nodes[p.startIdx : p.endIdx+1]
	}
	p.sources, err = provenance(i, e, shadowed)
	if err != nil {
		return plan{}, err
	}
	if op.Replace && e.Type == TypeToolResult {
		if err := f.checkToolResultRewrite(i, e, shadowed); err != nil {
			return plan{}, err
		}
	}
	return p, nil
}

// provenance validates sourceEventSeqs (§1.4 rule 4) and, for a replace,
// that every shadowed node is cited.
func provenance(i int, e Event, shadowed []int) ([]int, error) {
	var sources []int
	if len(e.SourceEventSeqs) > 0 {
		var why seqListError
		sources, why = decodeSeqList(e.SourceEventSeqs)
		switch why {
		case seqListNotArray:
			return nil, eventErr(i, e, "has sourceEventSeqs that is not an array")
		case seqListBadEntry:
			return nil, eventErr(i, e, "has sourceEventSeqs that does not densely contain non-negative safe integers")
		}
		if len(sources) == 0 && e.Type != TypeAssistantMessage {
			return nil, eventErr(i, e, "has empty sourceEventSeqs; only assistant/message may cite no sources")
		}
		if dup, ok := firstDuplicate(sources); ok {
			return nil, eventErr(i, e, fmt.Sprintf("has duplicate sourceEventSeqs entry %d", dup))
		}
		for _, s := range sources {
			if s >= i {
				return nil, eventErr(i, e, fmt.Sprintf("cites source seq %d, which is not an earlier event", s))
			}
		}
	}
	if missing := uncited(shadowed, sources); len(missing) > 0 {
		if sources == nil {
			return nil, eventErr(i, e, "replaces surface nodes without sourceEventSeqs; it must cite every shadowed node ("+joinInts(missing)+")")
		}
		return nil, eventErr(i, e, "does not cite every shadowed surface node in sourceEventSeqs; missing "+joinInts(missing))
	}
	return sources, nil
}

func (f *SurfaceFold) commit(p plan) {
	seq := len(f.class)
	f.sources = append(f.sources, p.sources)
	switch p.kind {
	case planLogOnly:
		f.class = append(f.class, classLogOnly)
	case planAppend:
		f.nodes = append(f.nodes, seq)
		f.class = append(f.class, classCurrent)
	case planReplace:
		shadowed := slices.Clone(f.nodes[p.startIdx : p.endIdx+1])
		f.nodes = slices.Replace(f.nodes, p.startIdx, p.endIdx+1, seq)
		for _, s := range shadowed {
			f.class[s] = classShadowed
			f.replacedBy[s] = seq
		}
		f.replacerOf[seq] = len(f.replacements)
		f.replacements = append(f.replacements, Replacement{Seq: seq, Start: p.op.Start, End: p.op.End, Shadowed: shadowed})
		f.class = append(f.class, classCurrent)
	}
	f.mu.Lock()
	f.derived = nil
	f.mu.Unlock()
}

func eventErr(i int, e Event, what string) *FoldError {
	return &FoldError{Seq: i, Message: fmt.Sprintf("session event %d (%s) %s", i, strconv.Quote(e.Type), what)}
}

// firstDuplicate returns the smallest repeated value. Sources are usually
// ascending (chunk seqs), which is checked without allocating.
func firstDuplicate(seqs []int) (int, bool) {
	ascending := true
	for k := 1; k < len(seqs); k++ {
		if seqs[k] <= seqs[k-1] {
			ascending = false
			break
		}
	}
	if ascending {
		return 0, false
	}
	sorted := slices.Clone(seqs)
	slices.Sort(sorted)
	for k := 1; k < len(sorted); k++ {
		if sorted[k] == sorted[k-1] {
			return sorted[k], true
		}
	}
	return 0, false
}

// uncited returns the shadowed seqs missing from sources, in surface order.
func uncited(shadowed, sources []int) []int {
	if len(shadowed) == 0 {
		return nil
	}
	var missing []int
	if len(shadowed)*len(sources) <= 256 {
		for _, s := range shadowed {
			if !slices.Contains(sources, s) {
				missing = append(missing, s)
			}
		}
		return missing
	}
	set := make(map[int]struct{}, len(sources))
	for _, s := range sources {
		set[s] = struct{}{}
	}
	for _, s := range shadowed {
		if _, ok := set[s]; !ok {
			missing = append(missing, s)
		}
	}
	return missing
}

func joinInts(seqs []int) string {
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ", ")
}

// AppendedSurfaces classifies events appended, from index from, to a log
// that passed ValidateLogFold, when that can be told without the events
// before them: ok is true when ValidateLogFold of the whole log would
// pass too, and surfaces then holds each appended event's class (none of
// them replaces, so no earlier event changes class). ok is false for an
// event that ValidateLogFold would reject and for a replace (which needs
// the surface before it); the caller then validates the whole log.
func AppendedSurfaces(from int, events []Event) (surfaces []string, ok bool) {
	surfaces = make([]string, len(events))
	for k, e := range events {
		i := from + k
		if checkEvent(i, e) != nil {
			return nil, false
		}
		p, err := planEvent(i, e, nil)
		if err != nil {
			return nil, false
		}
		surfaces[k] = SurfaceLogOnly
		if p.kind == planAppend {
			surfaces[k] = SurfaceCurrent
		}
	}
	return surfaces, true
}
