package searchtext

import "unicode/utf8"

//go:generate go run ./internal/gentables -o tables.go

// Tokenizer is the FTS5 tokenizer Tokens equals, for every code point: the
// session-search index uses it (tables.go is generated from SQLite with it,
// by internal/gentables, which keeps its own copy to build without this
// package).
const Tokenizer = `unicode61 remove_diacritics 2`

// MaxTokenBytes is the longest term FTS5 stores (FTS5_MAX_TOKEN_SIZE). A
// token whose folded text is longer is stored as its first MaxTokenBytes
// bytes, even when that cuts a UTF-8 sequence, and is still one token.
const MaxTokenBytes = 32768

// Token is one token as FTS5's tokenizer "unicode61 remove_diacritics 2"
// emits it.
type Token struct {
	// Text is the term FTS5 stores: the token folded (lower case, without
	// diacritics) and cut to MaxTokenBytes.
	Text string
	// Start and End are the byte range of the input the token was read
	// from: from its first letter or digit to the end of its last token
	// character, diacritics included.
	Start, End int
}

// Tokens appends the tokens of s to dst and returns it: the same tokens,
// in the same order and with the same text, as the index's FTS5 tokenizer
// produces (so their number is the document size bm25 uses). The Text of a
// token that folding leaves as it is is a substring of s; folded Texts
// share strings of about 2 KB, so a short text allocates at most one.
//
// Invalid UTF-8 is read as FTS5 reads it (a stray continuation byte is
// the Latin-1 character of that value, a lead byte takes every
// continuation byte after it, and an overlong form or a surrogate is
// U+FFFD), which the parity tests pin too; but text from JSON is never
// invalid, and that is all the index holds.
func Tokens(dst []Token, s string) []Token {
	// Folded Texts are written back to back into buf and become strings
	// a chunk at a time: few allocations, none for a short query.
	var bufArray [256]byte
	var pendingArray [32]int
	buf := bufArray[:0]
	pending := pendingArray[:0] // for each token in buf: its index in dst, its end in buf
	for i := 0; ; {
		start, end, folded := next(s, i)
		if start < 0 {
			break
		}
		t := Token{Start: start, End: end}
		if folded {
			at := len(buf)
			buf = fold(buf, s[start:end])
			buf = buf[:min(len(buf), at+MaxTokenBytes)]
			pending = append(pending, len(dst), len(buf))
		} else {
			t.Text = s[start:min(end, start+MaxTokenBytes)]
		}
		dst = append(dst, t)
		i = end
		if len(buf) >= foldChunk {
			settle(dst, string(buf), pending)
			buf, pending = buf[:0], pending[:0]
		}
	}
	settle(dst, string(buf), pending)
	return dst
}

// foldChunk is how many bytes of folded Texts share a string.
const foldChunk = 2048

// settle sets the Text of the tokens listed in pending to their part of
// folds.
func settle(dst []Token, folds string, pending []int) {
	at := 0
	for k := 0; k+1 < len(pending); k += 2 {
		dst[pending[k]].Text = folds[at:pending[k+1]]
		at = pending[k+1]
	}
}

// Count returns len(Tokens(nil, s)) without folding or allocating.
func Count(s string) int {
	n := 0
	for i := 0; ; n++ {
		start, end, _ := next(s, i)
		if start < 0 {
			return n
		}
		i = end
	}
}

// How unicode61 treats a character (tables.go).
const (
	separator = 0 // ends a token
	tokenChar = 1 // starts or continues a token
	diacritic = 2 // continues a token but cannot start one
)

// next returns the byte range of the first token of s at or after i (start
// is -1 if there is none) and whether folding changes its bytes. It is unicode61's loop: skip
// characters until one that can start a token, then take characters while
// they are token characters or diacritics.
func next(s string, i int) (start, end int, folded bool) {
	for {
		if i >= len(s) {
			return -1, -1, false
		}
		if b := s[i]; b < utf8.RuneSelf {
			if f := asciiFold[b]; f != 0 {
				start, folded = i, f != b
				i++
				break
			}
			i++
			continue
		}
		c, n, exact := decode(s, i)
		if class, f := lookup(c); class == tokenChar {
			start, folded = i, f != c || !exact
			i += n
			break
		}
		i += n
	}
	var diff byte // nonzero once an ASCII character folds
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			f := asciiFold[b]
			if f == 0 {
				break
			}
			diff |= f ^ b
			i++
			continue
		}
		c, n, exact := decode(s, i)
		class, f := lookup(c)
		if class == separator {
			break
		}
		folded = folded || f != c || !exact
		i += n
	}
	return start, i, folded || diff != 0
}

// fold appends the folded text of the token tok to dst, encoding each
// character as FTS5 does.
func fold(dst []byte, tok string) []byte {
	for i := 0; i < len(tok); {
		if b := tok[i]; b < utf8.RuneSelf {
			dst = append(dst, asciiFold[b])
			i++
			continue
		}
		c, n, _ := decode(tok, i)
		_, f := lookup(c)
		dst = appendChar(dst, f)
		i += n
	}
	return dst
}

// decode reads the non-ASCII character at s[i] as FTS5's READ_UTF8 does,
// returning it, its length, and whether FTS5 writes it back as the same
// bytes (it is valid UTF-8 whose last byte ends the sequence).
func decode(s string, i int) (c uint32, n int, exact bool) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if n > 1 && (i+n == len(s) || s[i+n]&0xC0 != 0x80) {
		// FTS5 reads U+FFFE and U+FFFF as U+FFFD: their entries in the
		// tables, learnt from FTS5, are U+FFFD's.
		return uint32(r), n, true
	}
	// Invalid UTF-8, or a character followed by stray continuation bytes,
	// which FTS5 takes as part of it.
	c, j := uint32(s[i]), i+1
	if c >= 0xC0 {
		c &= leadMask(c)
		for j < len(s) && s[j]&0xC0 == 0x80 {
			c = c<<6 + uint32(s[j]&0x3F)
			j++
		}
		if c < 0x80 || c&0xFFFFF800 == 0xD800 || c&0xFFFFFFFE == 0xFFFE {
			c = 0xFFFD
		}
	}
	return c, j - i, false
}

// leadMask is the bits of a lead byte b >= 0xC0 that FTS5's
// sqlite3Utf8Trans1 keeps.
func leadMask(b uint32) uint32 {
	switch {
	case b < 0xE0:
		return 0x1F
	case b < 0xF0:
		return 0x0F
	case b < 0xF8:
		return 0x07
	case b < 0xFC:
		return 0x03
	case b < 0xFE:
		return 0x01
	}
	return 0
}

// lookup returns the class of the non-ASCII character c and what it folds
// to (0 if it is dropped).
func lookup(c uint32) (class int, fold uint32) {
	if c > utf8.MaxRune {
		// Only invalid UTF-8 reads as such a value. FTS5's category table
		// gives it category 0, a token character, and folding keeps it.
		return tokenChar, c
	}
	v := trieLeaf[int(trieMid[int(trieRoot[c>>11])<<7|int(c>>4)&127])<<4|int(c&15)]
	return int(v & 3), uint32(int32(c) + v>>2)
}

// appendChar appends c to dst as FTS5's WRITE_UTF8 writes it: as UTF-8,
// with a value past U+10FFFF (from invalid input) cut to 21 bits.
func appendChar(dst []byte, c uint32) []byte {
	switch {
	case c == 0:
		return dst
	case c < 0x80:
		return append(dst, byte(c))
	case c < 0x800:
		return append(dst, 0xC0|byte(c>>6&0x1F), 0x80|byte(c&0x3F))
	case c < 0x10000:
		return append(dst, 0xE0|byte(c>>12&0x0F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	}
	return append(dst, 0xF0|byte(c>>18&0x07), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
}
