package session

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// MaxSafeInteger is the largest integer a JSON reader backed by IEEE doubles
// (JavaScript's Number.MAX_SAFE_INTEGER) represents exactly. Seqs, times and
// header counters must stay within it so that every reader of a log agrees on
// its values.
const MaxSafeInteger = 1<<53 - 1

// seqListError says why a raw seq list was refused.
type seqListError int

const (
	seqListOK       seqListError = iota
	seqListNotArray              // not a JSON array
	seqListBadEntry              // an entry is not a non-negative safe integer
)

// decodeSeqList decodes a raw JSON array of event seqs. Every entry must be a
// JSON number holding a non-negative safe integer; null (what a sparse array
// serializes to), strings, fractions and negatives are refused.
func decodeSeqList(raw json.RawMessage) ([]int, seqListError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, seqListNotArray
	}
	if plainDigitArray(raw) {
		// Fast path for the common case (chunk seqs cited by an assistant
		// message): only digits, commas and whitespace, so decoding into
		// []int cannot silently accept null or a string.
		var seqs []int
		if err := json.Unmarshal(raw, &seqs); err == nil {
			for _, s := range seqs {
				if s > MaxSafeInteger {
					return nil, seqListBadEntry
				}
			}
			if seqs == nil {
				seqs = []int{}
			}
			return seqs, seqListOK
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, seqListNotArray
	}
	seqs := make([]int, len(elems))
	for i, el := range elems {
		v, ok := parseSeq(el)
		if !ok {
			return nil, seqListBadEntry
		}
		seqs[i] = v
	}
	return seqs, seqListOK
}

func plainDigitArray(raw []byte) bool {
	for _, c := range raw[1:] {
		switch {
		case c >= '0' && c <= '9', c == ',', c == ']', c == ' ', c == '\t', c == '\n', c == '\r':
		default:
			return false
		}
	}
	return true
}

// parseSeq returns the value of a raw JSON token when it is a number holding
// a non-negative safe integer. Like a JavaScript reader it accepts integral
// values written with a fraction or exponent (1.0, 1e2) and negative zero.
func parseSeq(raw []byte) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if !isJSONNumber(raw) {
		return 0, false
	}
	if raw[0] != '-' && len(raw) <= 16 && allDigits(raw) {
		n, err := strconv.Atoi(string(raw))
		return n, err == nil && n <= MaxSafeInteger
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > MaxSafeInteger {
		return 0, false
	}
	return int(f), true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isJSONNumber reports whether b is exactly one number in JSON grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
}

// isSafeInt64 reports whether v lies within ±MaxSafeInteger.
func isSafeInt64(v int64) bool { return v >= -MaxSafeInteger && v <= MaxSafeInteger }
