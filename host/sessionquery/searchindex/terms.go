package searchindex

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
)

// Term summaries: for every common term (a tracked term, see
// defaultTrackMin) and every persisted session holding it, how many of the
// session's documents hold the term and the frontier of those documents under
// bm25: the documents no other one beats on both term frequency (higher
// is better) and length in tokens (shorter is better). bm25 grows with
// the frequency and shrinks with the length whatever the corpus
// statistics, so a session's best document for a one-term query is on
// its frontier, and for a phrase of tracked terms no document of the
// session can score above the weakest of its terms' frontiers (see
// ranking.go). A search then reads a few points per session instead of
// scoring every matching document.

// termPoint is one document on a term's frontier in one session: the
// term's frequency in it, its length in tokens and the low docBits of its
// rowid (which carry the tie-break order, see docBits).
type termPoint struct {
	tf, dl int32
	local  int64
}

// termEntry is one term in one session: the documents holding it and
// their frontier, frequency descending (so length descending too).
type termEntry struct {
	docs   int32
	points []termPoint
}

// add takes one more document holding the term into the entry.
func (e *termEntry) add(p termPoint) {
	e.docs++
	e.addPoint(p)
}

// addPoint keeps p if no point beats or equals it, and drops the points
// it beats. Of two documents with the same frequency and length the one
// with the smaller rowid is kept: it wins their tie.
func (e *termEntry) addPoint(p termPoint) {
	for _, q := range e.points {
		if q.tf >= p.tf && q.dl <= p.dl && (q.tf != p.tf || q.dl != p.dl || q.local <= p.local) {
			return
		}
	}
	e.points = slices.DeleteFunc(e.points, func(q termPoint) bool { return p.tf >= q.tf && p.dl <= q.dl })
	i, _ := slices.BinarySearchFunc(e.points, p, func(a, b termPoint) int { return int(b.tf) - int(a.tf) })
	e.points = slices.Insert(e.points, i, p)
}

// merge adds another entry's documents (those of events appended later).
func (e *termEntry) merge(o *termEntry) {
	e.docs += o.docs
	for _, p := range o.points {
		e.addPoint(p)
	}
}

// sessionTerms are the term entries of one session's documents, or of
// the documents appended to it, packed: the terms in byte order,
// concatenated into one string, and every entry's points in one slice. A
// summary is held from the log's read to its write, for every log read
// ahead of the writer, and refers to nothing else (a token's text may be a
// substring of a whole document).
type sessionTerms struct {
	// tracked, when not nil, is the tracked vocabulary the summary was
	// cut to (the terms of no other term have entries): it serves only
	// a transaction that reads the same vocabulary.
	tracked *trackedTerms
	// hashes are every term's of the documents, sorted, when the entries
	// were cut to tracked: a summary cut to an older vocabulary is still
	// the cut to a later one if the documents hold none of the terms
	// tracked since (cutTo).
	hashes []uint64
	arena  string  // the terms, concatenated in byte order
	toff   []int32 // term i is arena[toff[i]:toff[i+1]]
	docs   []int32 // the documents holding term i
	poff   []int32 // term i's points are points[poff[i]:poff[i+1]]
	points []termPoint
}

// len is the number of terms.
func (st *sessionTerms) len() int { return len(st.docs) }

// term returns term i.
func (st *sessionTerms) term(i int) string { return st.arena[st.toff[i]:st.toff[i+1]] }

// entry returns term i's entry; its points belong to st.
func (st *sessionTerms) entry(i int) termEntry {
	return termEntry{docs: st.docs[i], points: st.points[st.poff[i]:st.poff[i+1]]}
}

// find returns the index of term, or false.
func (st *sessionTerms) find(term string) (int, bool) {
	i := sort.Search(st.len(), func(i int) bool { return st.term(i) >= term })
	return i, i < st.len() && st.term(i) == term
}

// summarize tokenizes rows' forms (whose locals are set) and builds their
// entries: one map lookup per token, the frequencies counted per document
// as its tokens go by. count, when not nil, is told every term and its
// entry (how many of the rows hold it). With tracked not nil, only the
// entries of its terms are kept: a session's summary has an entry for each
// of its thousands of terms, and those of the logs read ahead of the
// writer would be most of a build's memory.
func summarize(rows []docRow, tracked *trackedTerms, count func(terms []string, entries []termEntry)) *sessionTerms {
	sc := summaryScratches.Get().(*summaryScratch)
	index := sc.index
	terms, entries := sc.terms[:0], sc.entries[:0]
	toks := sc.toks[:0]
	// Per entry: the last document that held the term and its frequency
	// there, added to the entry when the document is done.
	lastDoc, tf := sc.lastDoc[:0], sc.tf[:0]
	touched, order := sc.touched[:0], sc.order[:0]
	defer func() {
		sc.terms, sc.entries, sc.toks = terms, entries, toks
		sc.lastDoc, sc.tf, sc.touched, sc.order = lastDoc, tf, touched, order
		sc.release()
	}()
	for d := range rows {
		toks = searchtext.Tokens(toks[:0], rows[d].form)
		touched = touched[:0]
		for _, t := range toks {
			i, ok := index[t.Text]
			if !ok {
				i = int32(len(terms))
				index[t.Text] = i
				terms = append(terms, t.Text)
				if len(entries) < cap(entries) {
					entries = entries[:len(entries)+1]
					entries[i] = termEntry{points: entries[i].points[:0]}
				} else {
					entries = append(entries, termEntry{})
				}
				lastDoc, tf = append(lastDoc, -1), append(tf, 0)
			}
			if lastDoc[i] != int32(d) {
				lastDoc[i], tf[i] = int32(d), 0
				touched = append(touched, i)
			}
			tf[i]++
		}
		dl := int32(len(toks))
		for _, i := range touched {
			entries[i].add(termPoint{tf: tf[i], dl: dl, local: rows[d].local})
		}
	}
	size, npoints := 0, 0
	if count != nil {
		count(terms, entries)
	}
	for i := range terms {
		if tracked != nil {
			if _, ok := tracked.ids[terms[i]]; !ok {
				continue
			}
		}
		order = append(order, int32(i))
		size += len(terms[i])
		npoints += len(entries[i].points)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(terms[a], terms[b]) })
	var arena strings.Builder
	arena.Grow(size)
	st := &sessionTerms{tracked: tracked, toff: make([]int32, 1, len(order)+1), docs: make([]int32, 0, len(order)),
		poff: make([]int32, 1, len(order)+1), points: make([]termPoint, 0, npoints)}
	if tracked != nil {
		st.hashes = make([]uint64, len(terms))
		for i, t := range terms {
			st.hashes[i] = maphash.String(termSeed, t)
		}
		slices.Sort(st.hashes)
	}
	for _, i := range order {
		arena.WriteString(terms[i])
		st.toff = append(st.toff, int32(arena.Len()))
		st.docs = append(st.docs, entries[i].docs)
		st.points = append(st.points, entries[i].points...)
		st.poff = append(st.poff, int32(len(st.points)))
	}
	st.arena = arena.String()
	return st
}

// Term summaries are stored by blocks of sessions: one row per tracked
// term and 2^blockBits consecutive session keys, so that a search reads a
// term's summaries in a few hundred rows and an append rewrites about a
// kilobyte per term it touches.
const blockBits = 6

// blockEntry is one session's entry in a block.
type blockEntry struct {
	key int64
	termEntry
}

// encodeBlock writes entries (in key order) as varints: per entry the key
// delta, the document count, the point count, then each point's
// frequency, length in tokens, and its local rowid as its two parts (see
// docBits), the length in code points and the ordinal, which are small
// numbers where the local rowid is a 39-bit one.
func encodeBlock(entries []blockEntry) []byte {
	var buf []byte
	prev := int64(0)
	for _, e := range entries {
		buf = binary.AppendUvarint(buf, uint64(e.key-prev))
		prev = e.key
		buf = binary.AppendUvarint(buf, uint64(e.docs))
		buf = binary.AppendUvarint(buf, uint64(len(e.points)))
		for _, p := range e.points {
			buf = binary.AppendUvarint(buf, uint64(p.tf))
			buf = binary.AppendUvarint(buf, uint64(p.dl))
			buf = binary.AppendUvarint(buf, uint64(p.local>>ordBits))
			buf = binary.AppendUvarint(buf, uint64(maxOrdinal-p.local&maxOrdinal))
		}
	}
	return buf
}

var errBadBlock = &damagedError{err: errors.New("malformed term summary block")}

// decodeBlock reads what encodeBlock wrote, calling fn for each entry in
// key order; the entry's points are only valid during the call.
func decodeBlock(buf []byte, scratch []termPoint, fn func(key int64, docs int32, points []termPoint)) ([]termPoint, error) {
	r := uvarints{buf: buf}
	key := int64(0)
	for r.i < len(r.buf) {
		key += int64(r.next())
		docs, n := r.next(), r.next()
		if n > uint64(len(r.buf)-r.i) {
			return scratch, errBadBlock
		}
		scratch = scratch[:0]
		for range n {
			tf, dl, length, ordinal := r.next(), r.next(), r.next(), r.next()
			if length > maxLength || ordinal > maxOrdinal {
				return scratch, errBadBlock
			}
			scratch = append(scratch, termPoint{tf: int32(tf), dl: int32(dl), local: localRowid(int(length), int(ordinal))})
		}
		if r.bad {
			return scratch, errBadBlock
		}
		fn(key, int32(docs), scratch)
	}
	return scratch, nil
}

// uvarints reads a sequence of unsigned varints; past a malformed or
// truncated one it reads zeros and sets bad.
type uvarints struct {
	buf []byte
	i   int
	bad bool
}

func (r *uvarints) next() uint64 {
	if r.i < len(r.buf) && r.buf[r.i] < 0x80 {
		r.i++
		return uint64(r.buf[r.i-1])
	}
	return r.slow()
}

func (r *uvarints) slow() uint64 {
	v, n := binary.Uvarint(r.buf[r.i:])
	if n <= 0 {
		r.bad, r.i = true, len(r.buf)
		return 0
	}
	r.i += n
	return v
}

// decodeEntries is decodeBlock into owned entries.
func decodeEntries(buf []byte) ([]blockEntry, error) {
	var out []blockEntry
	_, err := decodeBlock(buf, nil, func(key int64, docs int32, points []termPoint) {
		out = append(out, blockEntry{key: key, termEntry: termEntry{docs: docs, points: slices.Clone(points)}})
	})
	return out, err
}

// termSeed hashes terms for sessionTerms.hashes.
var termSeed = maphash.MakeSeed()

// cutTo reports whether the summary serves a transaction that reads
// vocabulary now: it has every term's entries, or was cut to now, or to
// an earlier vocabulary (extends) and its documents hold none of the
// terms tracked since (a hash equal to one of theirs counts as holding
// it).
func (st *sessionTerms) cutTo(now *trackedTerms, extends func(old *trackedTerms) bool) bool {
	if st.tracked == nil || st.tracked.version == now.version {
		return true
	}
	if !extends(st.tracked) {
		return false
	}
	for _, t := range now.since(st.tracked) {
		if _, held := slices.BinarySearch(st.hashes, maphash.String(termSeed, t)); held {
			return false
		}
	}
	return true
}

// summaryScratch is summarize's working memory, reused from one session
// to the next: a build summarizes every log, and allocating it afresh for
// each was most of a build's allocations (and of its collector's work).
type summaryScratch struct {
	index          map[string]int32
	terms          []string
	entries        []termEntry
	toks           []searchtext.Token
	lastDoc, tf    []int32
	touched, order []int32
}

var summaryScratches = sync.Pool{New: func() any { return &summaryScratch{index: map[string]int32{}} }}

// release drops what the scratch refers to (substrings of the session's
// documents) and returns it to the pool; one grown by a session of
// hundreds of thousands of terms is left to the collector instead.
func (sc *summaryScratch) release() {
	if len(sc.terms) > 1<<16 {
		return
	}
	clear(sc.index)
	clear(sc.terms)
	clear(sc.toks[:cap(sc.toks)])
	summaryScratches.Put(sc)
}

// textTokens appends the tokens of a document's stored text (indexed as
// its searchtext form) to dst.
func textTokens(dst []searchtext.Token, text string) []searchtext.Token {
	return searchtext.Tokens(dst, searchtext.Segment(text).Text)
}

// termScratch is reusable memory for tokenizing.
type termScratch struct {
	toks []searchtext.Token
	seen map[string]bool
}

// removedTerms adds to terms, for each distinct term of form, one
// document.
func removedTerms(form string, sc *termScratch, terms map[string]int32) {
	sc.toks = searchtext.Tokens(sc.toks[:0], form)
	if sc.seen == nil {
		sc.seen = map[string]bool{}
	}
	clear(sc.seen)
	for _, t := range sc.toks {
		if !sc.seen[t.Text] {
			sc.seen[t.Text] = true
			terms[t.Text]++
		}
	}
}

// phraseTokens returns the tokens of a phrase's form, as the index
// tokenizes it.
func phraseTokens(form string) []string {
	toks := searchtext.Tokens(nil, form)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Text
	}
	return out
}

// countPhrase counts the instances of phrase in toks: every position it
// starts at, overlapping ones included, as FTS5 counts them for bm25.
func countPhrase(toks []searchtext.Token, phrase []string) int32 {
	if len(phrase) == 0 {
		return 0
	}
	n := int32(0)
	for i := 0; i+len(phrase) <= len(toks); i++ {
		if toks[i].Text != phrase[0] {
			continue
		}
		match := true
		for k := 1; k < len(phrase); k++ {
			if toks[i+k].Text != phrase[k] {
				match = false
				break
			}
		}
		if match {
			n++
		}
	}
	return n
}
