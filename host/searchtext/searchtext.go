package searchtext

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentinel is the token placed before every whole identifier appended to a
// document's form. It is a private-use character, which unicode61 keeps as
// a token character, and Query removes it from queries, so no query phrase
// can span the end of the text and an appended identifier.
const Sentinel = '\uE000'

// Form is a text in its indexed form.
type Form struct {
	// Text is what the index tokenizes: the original with a space at every
	// cut, then, for every identifier that was cut, " <Sentinel> <identifier>".
	Text string
	main int     // bytes of Text before the appended identifiers
	cuts []int   // original byte offsets a space was inserted before, ascending
	ids  []ident // the appended identifiers, in order
}

// ident is one appended identifier: where it is in Text and in the original.
type ident struct {
	at         int // byte offset of the identifier in Text
	start, end int // its byte range in the original
}

// Changed reports whether the form differs from the original text.
func (f Form) Changed() bool { return len(f.cuts) > 0 }

// Segment returns the indexed form of s.
func Segment(s string) Form {
	return segment(s, true)
}

func segment(s string, camel bool) Form {
	cuts, ids := scan(s, camel)
	if len(cuts) == 0 {
		return Form{Text: s, main: len(s)}
	}
	var b strings.Builder
	b.Grow(len(s) + len(cuts) + len(ids)*5 + sumLen(ids))
	prev := 0
	for _, c := range cuts {
		b.WriteString(s[prev:c])
		b.WriteByte(' ')
		prev = c
	}
	b.WriteString(s[prev:])
	f := Form{main: b.Len(), cuts: cuts}
	for _, id := range ids {
		b.WriteByte(' ')
		b.WriteRune(Sentinel)
		b.WriteByte(' ')
		f.ids = append(f.ids, ident{at: b.Len(), start: id[0], end: id[1]})
		b.WriteString(s[id[0]:id[1]])
	}
	f.Text = b.String()
	return f
}

// Query returns the form a query phrase takes: its cuts, no appended
// identifiers, and no Sentinel (each becomes a space).
func Query(q string) string {
	f := Segment(noSentinel(q))
	return f.Text[:f.main]
}

// Whole returns the query phrase that finds its identifiers whole: CJK
// characters cut, camel case not. It differs from Query only for a query
// holding a camel-case identifier, which a document may spell whole in
// another case ("openai" for "OpenAI"), and which a document holding it
// exactly matches both ways: searched as Query OR Whole, such a document
// ranks before one that only has the parts as words.
func Whole(q string) string {
	f := segment(noSentinel(q), false)
	return f.Text[:f.main]
}

func noSentinel(q string) string {
	if strings.ContainsRune(q, Sentinel) {
		return strings.ReplaceAll(q, string(Sentinel), " ")
	}
	return q
}

func sumLen(ids [][2]int) int {
	n := 0
	for _, id := range ids {
		n += id[1] - id[0]
	}
	return n
}

// Origin maps a byte offset in Text to the original: an offset in the
// appended identifiers maps to the start of the identifier in the text.
func (f Form) Origin(i int) int {
	if i >= f.main && len(f.ids) > 0 {
		k := sort.Search(len(f.ids), func(k int) bool { return f.ids[k].at > i }) - 1
		return f.ids[max(k, 0)].start
	}
	// The k-th inserted space sits at cuts[k]+k in Text.
	k := sort.Search(len(f.cuts), func(k int) bool { return f.cuts[k]+k >= i })
	return i - k
}

// Restore turns Text with start and end markers inserted (a highlight of
// the form) into the original text with the same markers around the same
// characters: inserted spaces and the appended identifiers are dropped.
// Markers must be runes Text does not contain. If the only highlight is in
// an appended identifier, the identifier in the text is marked instead.
func (f Form) Restore(marked string, start, end rune) string {
	if !f.Changed() {
		return marked
	}
	var b strings.Builder
	b.Grow(len(marked))
	p, k := 0, 0 // offset in Text; next inserted space
	started := false
	for i := 0; i < len(marked); {
		r, size := utf8.DecodeRuneInString(marked[i:])
		if r == start || r == end {
			i += size
			if p > f.main { // in the appended identifiers
				if r == start && !started {
					return f.markIdent(b.String(), p, start, end)
				}
				continue
			}
			started = started || r == start
			b.WriteRune(r)
			continue
		}
		if p >= f.main {
			// The rest is the appended identifiers: only a marker matters.
			p += size
			i += size
			continue
		}
		if k < len(f.cuts) && p == f.cuts[k]+k {
			k++
		} else {
			b.WriteString(marked[i : i+size])
		}
		p += size
		i += size
	}
	return b.String()
}

// markIdent marks, in restored (the whole original, unmarked), the
// identifier whose appended copy holds Text offset p.
func (f Form) markIdent(restored string, p int, start, end rune) string {
	k := sort.Search(len(f.ids), func(k int) bool { return f.ids[k].at > p }) - 1
	id := f.ids[max(k, 0)]
	return restored[:id.start] + string(start) + restored[id.start:id.end] + string(end) + restored[id.end:]
}

// class is what scan needs to know of a rune.
type class uint8

const (
	other class = iota // not a token character: unicode61 separates here
	cjk                // Han, Hiragana, Katakana, Hangul
	lower
	upper
	word // any other letter or digit
)

func classify(r rune) class {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z':
			return lower
		case 'A' <= r && r <= 'Z':
			return upper
		case '0' <= r && r <= '9':
			return word
		}
		return other
	}
	switch {
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		return cjk
	case unicode.IsLower(r):
		return lower
	case unicode.IsUpper(r):
		return upper
	case unicode.IsLetter(r), unicode.IsNumber(r), unicode.Is(unicode.Co, r):
		return word
	}
	return other
}

// scan returns the cuts of s (original byte offsets, ascending) and the
// byte ranges of the identifiers with a camel-case cut; camel false makes
// CJK cuts only.
func scan(s string, camel bool) (cuts []int, ids [][2]int) {
	// Fast path: ASCII text without an upper-case letter after a letter has
	// no cut at all.
	slow := false
	for i := 0; i < len(s) && !slow; i++ {
		c := s[i]
		slow = c >= utf8.RuneSelf ||
			camel && i > 0 && 'A' <= c && c <= 'Z' && ('a' <= s[i-1] && s[i-1] <= 'z' || 'A' <= s[i-1] && s[i-1] <= 'Z')
	}
	if !slow {
		return nil, nil
	}
	var prev class = other
	runStart, runCut := -1, false // the current run of non-CJK letters and digits
	endRun := func(at int) {
		if runStart >= 0 && runCut {
			ids = append(ids, [2]int{runStart, at})
		}
		runStart, runCut = -1, false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := classify(r)
		switch {
		case c == other || c == cjk:
			endRun(i)
		case runStart < 0:
			runStart = i
		}
		if prev != other && c != other {
			cut := prev == cjk || c == cjk
			if !cut && camel && c == upper {
				cut = prev == lower || prev == upper && lowerRunFollows(s[i+size:])
			}
			if cut {
				cuts = append(cuts, i)
				if c != cjk && prev != cjk {
					runCut = true
				}
			}
		}
		prev = c
		i += size
	}
	endRun(len(s))
	return cuts, ids
}

// lowerRunFollows reports whether s starts with two lower-case letters:
// "HTTPServer" cuts before S, "IDs" and "URLs" do not cut.
func lowerRunFollows(s string) bool {
	for n := 0; n < 2; n++ {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || classify(r) != lower {
			return false
		}
		s = s[size:]
	}
	return true
}

// FirstMatch returns the original byte offset of the earliest instance of
// any of phrases (query forms, as Query and Whole return them) in the
// form's text, tokenized exactly as unicode61 with remove_diacritics 2
// does it (Tokens), which is where FTS5's highlight() starts its first
// span. ok is false when no phrase occurs.
func (f Form) FirstMatch(phrases []string) (at int, ok bool) {
	doc := Tokens(nil, f.Text)
	best := -1
	for _, ph := range phrases {
		want := Tokens(nil, ph)
		if len(want) == 0 {
			continue
		}
		for i := 0; i+len(want) <= len(doc); i++ {
			if best >= 0 && doc[i].Start >= best {
				break
			}
			if sameTexts(doc[i:i+len(want)], want) {
				best = doc[i].Start
				break
			}
		}
	}
	if best < 0 {
		return -1, false
	}
	return f.Origin(best), true
}

// sameTexts reports whether a and b (as long as b) hold the same terms.
func sameTexts(a, b []Token) bool {
	for i := range b {
		if a[i].Text != b[i].Text {
			return false
		}
	}
	return true
}
