package sessionquery

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refPattern is the timestamp grammar written independently of the
// hand-rolled scanner, as the oracle the fuzzer checks it against.
var refPattern = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?(Z|[+-][0-9]{2}:[0-9]{2})$`)

// refParse classifies s with the regexp and time.Date's normalization: a
// field set is valid exactly when time.Date does not have to roll it over.
func refParse(s string) (timestamp, tsError) {
	m := refPattern.FindStringSubmatch(s)
	if m == nil {
		return timestamp{}, tsPattern
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	y, mo, d, h, mi := n(1), n(2), n(3), n(4), n(5)
	sec := 0
	if m[6] != "" {
		sec = n(6)
	}
	offset := 0
	if z := m[8]; z != "Z" {
		oh, _ := strconv.Atoi(z[1:3])
		om, _ := strconv.Atoi(z[4:6])
		if oh > 23 || om > 59 {
			return timestamp{}, tsInvalid
		}
		offset = oh*60 + om
		if z[0] == '-' {
			offset = -offset
		}
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if mo < 1 || mo > 12 || t.Year() != y || int(t.Month()) != mo || t.Day() != d || h > 23 || mi > 59 || sec > 59 {
		return timestamp{}, tsInvalid
	}
	frac := m[7]
	ms := t.UnixMilli() - int64(offset)*60000
	if frac != "" {
		head := (frac + "000")[:3]
		v, _ := strconv.Atoi(head)
		ms += int64(v)
	}
	rest := ""
	if len(frac) > 3 {
		rest = strings.TrimRight(frac[3:], "0")
	}
	return timestamp{ms: ms, rest: rest}, tsOK
}

func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{
		"2026-07-24T00:00Z", "2026-07-24T00:00:00.1230000100+08:00", "1969-12-31T23:59:59.9999999Z",
		"2100-02-29T00:00Z", "2026-07-24T24:00Z", "2026-07-24T00:00+0800", "2026-07-24T00:00.5Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := parseTimestamp(s)
		want, werr := refParse(s)
		if gerr != werr || (gerr == tsOK && got != want) {
			t.Fatalf("parseTimestamp(%q) = %+v/%d, reference %+v/%d", s, got, gerr, want, werr)
		}
		if gerr != tsOK {
			return
		}
		lo, hi := got.lowerBound(), got.upperBound()
		ms := float64(got.ms)
		if math.IsNaN(lo) || math.IsNaN(hi) || lo < ms || hi > ms+1 || hi >= ms+1 || lo > hi {
			t.Fatalf("%q: bounds %v..%v around %v", s, lo, hi, ms)
		}
		if (got.rest == "") != (lo == ms && hi == ms) {
			t.Fatalf("%q: bounds %v..%v do not match the sub-millisecond part %q", s, lo, hi, got.rest)
		}
		if got.after(got) {
			t.Fatalf("%q is after itself", s)
		}
	})
}
