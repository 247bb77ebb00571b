package sessionquery

import (
	"math"
	"strings"
	"time"
)

// timestamp is a parsed time bound: whole epoch milliseconds plus the
// fraction digits below the millisecond, with trailing zeros stripped, so
// that two bounds inside one millisecond still compare exactly.
type timestamp struct {
	ms   int64
	rest string
}

type tsError int

const (
	tsOK      tsError = iota
	tsPattern         // not YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM)
	tsInvalid         // the pattern holds but the date or time is impossible
)

// parseTimestamp accepts exactly YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM):
// uppercase T and Z, optional seconds, a fraction of any length only after
// seconds, and a mandatory zone whose offset has a colon. Digits are ASCII.
// Month, day (Gregorian leap years), hour 0-23, minute and second 0-59 and
// an offset of at most 23:59 are checked separately, so the caller can tell
// a malformed string from an impossible instant.
func parseTimestamp(s string) (timestamp, tsError) {
	p := tsParser{s: s, ok: true}
	year := p.digits(4)
	p.lit('-')
	month := p.digits(2)
	p.lit('-')
	day := p.digits(2)
	p.lit('T')
	hour := p.digits(2)
	p.lit(':')
	minute := p.digits(2)
	second, frac := 0, ""
	if p.peek(':') {
		p.lit(':')
		second = p.digits(2)
		if p.peek('.') {
			p.lit('.')
			frac = p.run()
		}
	}
	offset, offsetOK := 0, true
	switch {
	case p.peek('Z'):
		p.lit('Z')
	case p.peek('+'), p.peek('-'):
		sign := 1
		if p.peek('-') {
			sign = -1
		}
		p.pos++
		oh := p.digits(2)
		p.lit(':')
		om := p.digits(2)
		offsetOK = oh <= 23 && om <= 59
		offset = sign * (oh*60 + om)
	default:
		p.ok = false
	}
	if !p.ok || p.pos != len(s) {
		return timestamp{}, tsPattern
	}
	if !offsetOK || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return timestamp{}, tsInvalid
	}
	millis := 0
	if frac != "" {
		millis = atoi((frac + "00")[:3])
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, millis*int(time.Millisecond), time.UTC)
	ms := t.UnixMilli() - int64(offset)*int64(time.Minute/time.Millisecond)
	rest := ""
	if len(frac) > 3 {
		rest = strings.TrimRight(frac[3:], "0")
	}
	return timestamp{ms: ms, rest: rest}, tsOK
}

// after reports whether t is strictly later than o, comparing the
// sub-millisecond digits one by one with missing digits read as 0.
func (t timestamp) after(o timestamp) bool {
	if t.ms != o.ms {
		return t.ms > o.ms
	}
	a, b := t.rest, o.rest
	if n := max(len(a), len(b)); n > 0 {
		a += strings.Repeat("0", n-len(a))
		b += strings.Repeat("0", n-len(b))
	}
	return a > b
}

// lowerBound is the smallest float at or after the instant: the next float
// above ms when a sub-millisecond part exists. Event times are integers, so
// this excludes exactly the events of millisecond ms.
func (t timestamp) lowerBound() float64 {
	if t.rest == "" {
		return float64(t.ms)
	}
	return math.Nextafter(float64(t.ms), math.Inf(1))
}

// upperBound is the largest float at or before the instant: just below
// ms+1 when a sub-millisecond part exists, so that two bounds inside one
// millisecond make an empty but valid interval rather than a reversed one.
func (t timestamp) upperBound() float64 {
	if t.rest == "" {
		return float64(t.ms)
	}
	return math.Nextafter(float64(t.ms+1), math.Inf(-1))
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// tsParser scans s left to right; the first mismatch clears ok and every
// later step is a no-op.
type tsParser struct {
	s   string
	pos int
	ok  bool
}

func (p *tsParser) peek(c byte) bool {
	return p.ok && p.pos < len(p.s) && p.s[p.pos] == c
}

func (p *tsParser) lit(c byte) {
	if !p.peek(c) {
		p.ok = false
		return
	}
	p.pos++
}

// digits reads exactly n ASCII digits.
func (p *tsParser) digits(n int) int {
	if !p.ok || p.pos+n > len(p.s) {
		p.ok = false
		return 0
	}
	v := 0
	for _, c := range []byte(p.s[p.pos : p.pos+n]) {
		if c < '0' || c > '9' {
			p.ok = false
			return 0
		}
		v = v*10 + int(c-'0')
	}
	p.pos += n
	return v
}

// run reads one or more ASCII digits and returns them.
func (p *tsParser) run() string {
	start := p.pos
	for p.ok && p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		p.ok = false
	}
	return p.s[start:p.pos]
}

func atoi(digits string) int {
	v := 0
	for _, c := range []byte(digits) {
		v = v*10 + int(c-'0')
	}
	return v
}
