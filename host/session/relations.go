package session

import (
	"errors"
	"fmt"
	"slices"
)

// ErrEventNotFound reports a trace target outside the log.
var ErrEventNotFound = errors.New("session event not found")

// Relations are the replacement and source relations of one event
// (session-query.md §1.5). Every slice is a fresh copy and never nil.
type Relations struct {
	Seq     int    `json:"seq"`
	Surface string `json:"surface"`
	// ReplacedBy is the event that shadowed this one; nil if never shadowed.
	ReplacedBy *int `json:"replacedBy,omitempty"`
	// ReplacementChain follows ReplacedBy until it stops.
	ReplacementChain []int `json:"replacementChain"`
	// ReplacedEventSeqs are the nodes this event removed when it is a replacer.
	ReplacedEventSeqs []int `json:"replacedEventSeqs"`
	// SourceEventSeqs is this event's own sourceEventSeqs in recorded order.
	SourceEventSeqs []int `json:"sourceEventSeqs"`
	// DerivedEventSeqs are the later events citing this one directly, in log order.
	DerivedEventSeqs []int `json:"derivedEventSeqs"`
}

// Relations returns the relations of seq, or false when seq is not in the
// log. The first call builds the reverse-source index for the whole log, so
// tracing many events of one log costs one fold and one index.
func (f *SurfaceFold) Relations(seq int) (Relations, bool) {
	if seq < 0 || seq >= len(f.events) {
		return Relations{}, false
	}
	r := Relations{
		Seq:               seq,
		Surface:           f.class[seq].String(),
		ReplacementChain:  []int{},
		ReplacedEventSeqs: []int{},
		SourceEventSeqs:   []int{},
	}
	if by, ok := f.replacedBy[seq]; ok {
		r.ReplacedBy = &by
		for cur, ok := by, true; ok; cur, ok = f.replacedBy[cur] {
			r.ReplacementChain = append(r.ReplacementChain, cur)
		}
	}
	if idx, ok := f.replacerOf[seq]; ok {
		r.ReplacedEventSeqs = slices.Clone(f.replacements[idx].Shadowed)
	}
	if src := f.sources[seq]; len(src) > 0 {
		r.SourceEventSeqs = slices.Clone(src)
	}
	r.DerivedEventSeqs = slices.Clone(f.derivedIndex().of(seq))
	return r, true
}

// TraceEvent returns the relations of seq in events. Like the query service
// it checks that the target exists before validating the fold, so a missing
// seq on a broken log reports ErrEventNotFound rather than a *FoldError.
func TraceEvent(events []Event, seq int) (Relations, error) {
	if seq < 0 || seq >= len(events) {
		return Relations{}, fmt.Errorf("session event %d: %w", seq, ErrEventNotFound)
	}
	f, err := Fold(events)
	if err != nil {
		return Relations{}, err
	}
	r, _ := f.Relations(seq)
	return r, nil
}

// derivedIndex maps each seq to the later events citing it, in compressed
// form: the citers of s are seqs[start[s]:start[s+1]], ascending because
// citers are visited in log order.
type derivedIndex struct {
	start []int
	seqs  []int
}

func (d *derivedIndex) of(seq int) []int {
	if d == nil || seq+1 >= len(d.start) {
		return nil
	}
	return d.seqs[d.start[seq]:d.start[seq+1]]
}

func (f *SurfaceFold) derivedIndex() *derivedIndex {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.derived != nil {
		return f.derived
	}
	n := len(f.sources)
	d := &derivedIndex{start: make([]int, n+1)}
	total := 0
	for _, src := range f.sources {
		for _, s := range src {
			d.start[s+1]++
			total++
		}
	}
	for s := 1; s <= n; s++ {
		d.start[s] += d.start[s-1]
	}
	d.seqs = make([]int, total)
	next := slices.Clone(d.start[:n])
	for citer, src := range f.sources {
		for _, s := range src {
			d.seqs[next[s]] = citer
			next[s]++
		}
	}
	f.derived = d
	return d
}
