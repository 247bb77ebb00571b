package searchtext

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func showTokens(toks []Token) string {
	var b strings.Builder
	for _, t := range toks {
		fmt.Fprintf(&b, "%s@%d..%d ", show(t.Text), t.Start, t.End)
	}
	return b.String()
}

// The edge cases of unicode61 remove_diacritics 2 that the index meets or
// that the tokenizer's design rests on, each as FTS5 was seen to behave;
// the oracle checks every one against FTS5 again.
func TestTokensEdgeCasesAsFTS5(t *testing.T) {
	long := strings.Repeat("a", MaxTokenBytes-1)
	for _, c := range []struct {
		name, in string
		want     []Token
	}{
		{"ASCII is folded to lower case", "Hello, World_42!", []Token{{"hello", 0, 5}, {"world", 7, 12}, {"42", 13, 15}}},
		{"a combining mark inside a token is dropped", "x\u0301y", []Token{{"xy", 0, 4}}},
		{"a combining mark ends up in the token's range", "e\u0301", []Token{{"e", 0, 3}}},
		{"precomposed letters lose their diacritics", "Crème BRÛLÉE", []Token{{"creme", 0, 6}, {"brulee", 7, 15}}},
		{"a lone combining mark is no token and not counted", "a \u0301 b", []Token{{"a", 0, 1}, {"b", 5, 6}}},
		{"a combining mark cannot start a token", "\u0301ab", []Token{{"ab", 2, 4}}},
		{"a mark outside remove_diacritics' set is a separator", "a\u0483b a\u0903b", []Token{{"a", 0, 1}, {"b", 3, 4}, {"a", 5, 6}, {"b", 9, 10}}},
		{"the private-use sentinel is a token", "x \uE000 y", []Token{{"x", 0, 1}, {"\uE000", 2, 5}, {"y", 6, 7}}},
		{"noncharacters other than U+FFFE and U+FFFF are tokens", "\uFDD0 \U0001FFFE", []Token{{"\uFDD0", 0, 3}, {"\U0001FFFE", 4, 8}}},
		{"U+FFFD, U+FFFE and U+FFFF are separators", "a\uFFFDb\uFFFEc\uFFFFd", []Token{{"a", 0, 1}, {"b", 4, 5}, {"c", 8, 9}, {"d", 12, 13}}},
		{"characters FTS5's tables predate are tokens", "a\U0001F3F3b \U0001FAE0", []Token{{"a\U0001F3F3b", 0, 6}, {"\U0001FAE0", 7, 11}}},
		{"characters FTS5's tables know as symbols are separators", "a\U0001F600b", []Token{{"a", 0, 1}, {"b", 5, 6}}},
		{"dotted capital I folds to i", "İstanbul", []Token{{"istanbul", 0, 9}}},
		{"sharp s stays", "Straße", []Token{{"straße", 0, 7}}},
		{"title case folds to lower case", "ǅ", []Token{{"ǆ", 0, 2}}},
		{"the Kelvin sign folds to ASCII k", "5\u212A", []Token{{"5k", 0, 4}}},
		{"fullwidth letters fold to fullwidth lower case", "ＡＢｃ", []Token{{"ａｂｃ", 0, 9}}},
		{"ligatures stay", "ﬁle", []Token{{"ﬁle", 0, 5}}},
		{"Deseret is the one folding outside the BMP", "\U00010400", []Token{{"\U00010428", 0, 4}}},
		{"CJK is one token per run", "数据库 データ 한국어", []Token{{"数据库", 0, 9}, {"データ", 10, 19}, {"한국어", 20, 29}}},
		{"a long token is cut and counted once", long + "ab cd", []Token{{long + "a", 0, MaxTokenBytes + 1}, {"cd", MaxTokenBytes + 2, MaxTokenBytes + 4}}},
		{"a cut inside a UTF-8 sequence keeps the bytes before it", long + "中b", []Token{{long + "\xe4", 0, MaxTokenBytes + 3}}},
		{"the cut applies to the folded text", long + "Éb", []Token{{long + "e", 0, MaxTokenBytes + 2}}},
		{"a stray continuation byte is a Latin-1 character", "a\xaab", []Token{{"aªb", 0, 3}}},
		{"a lead byte takes every continuation byte after it", "é\x80 x", []Token{{"\u3a40", 0, 3}, {"x", 4, 5}}},
		{"an invalid byte is a separator", "a\xffb", []Token{{"a", 0, 1}, {"b", 2, 3}}},
		{"a truncated sequence is the value of its bytes", "a\xe4\xb8", []Token{{"aĸ", 0, 3}}},
		{"a lone lead byte is a separator", "a\xc3 b", []Token{{"a", 0, 1}, {"b", 3, 4}}},
		{"an overlong form of ASCII is a separator", "a\xc1\x81b", []Token{{"a", 0, 1}, {"b", 3, 4}}},
		{"an overlong form of a letter is that letter", "a\xe0\x83\xa9b", []Token{{"aeb", 0, 5}}},
		{"a surrogate is a separator", "a\xed\xa0\x80b", []Token{{"a", 0, 1}, {"b", 4, 5}}},
		{"past U+10FFFF is a token character", "a\xf4\x90\x80\x80b", []Token{{"a\xf4\x90\x80\x80b", 0, 6}}},
		{"past U+1FFFFF is written back cut to 21 bits", "\xf8\x88\x80\x80\x80", []Token{{"\xf0\x80\x80\x80", 0, 5}}},
		{"no text, no token", " \t\n.,;", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Tokens(nil, c.in)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Tokens(%s) = %s, want %s", show(c.in), showTokens(got), showTokens(c.want))
			}
			o := newOracle(t)
			sizes := o.index([]string{c.in})
			checkTokens(t, c.in, sizes[0], o.terms(sizes)[0])
		})
	}
}

// Every Unicode scalar value is pinned against FTS5 with few tokens, so
// the whole range stays fast under -race: separators as "a<c>a<c>a…"
// (one "a" per separator, and any token character would join two a's);
// characters that fold to themselves as one long token "a<c><c>…b" (the
// same bytes back only if each is a token character kept as it is) and
// alone between spaces (one token each only if each can start a token);
// every other character as "a<c>b <c> ", token by token.
func TestTokensMatchFTS5ForEveryCodePoint(t *testing.T) {
	var seps, same, other []rune
	for c := rune(0); c <= utf8.MaxRune; c++ {
		if !utf8.ValidRune(c) {
			continue
		}
		class, f := classOf(c)
		switch {
		case class == separator:
			seps = append(seps, c)
		case class == tokenChar && f == c:
			same = append(same, c)
		default:
			other = append(other, c)
		}
	}
	var docs, alone []string
	var b strings.Builder
	for chunk := range slices.Chunk(seps, 2048) {
		b.Reset()
		for _, c := range chunk {
			b.WriteByte('a')
			b.WriteRune(c)
		}
		b.WriteByte('a')
		docs = append(docs, b.String())
	}
	for chunk := range slices.Chunk(same, 1024) {
		b.Reset()
		b.WriteByte('a')
		for _, c := range chunk {
			b.WriteRune(c)
		}
		b.WriteByte('b')
		docs = append(docs, b.String())
	}
	for chunk := range slices.Chunk(other, 256) {
		b.Reset()
		for _, c := range chunk {
			b.WriteByte('a')
			b.WriteRune(c)
			b.WriteString("b ")
			b.WriteRune(c)
			b.WriteByte(' ')
		}
		docs = append(docs, b.String())
	}
	// A term per code point makes FTS5 slow: under -race, only the BMP
	// and every 17th code point past it (17 is prime to the tables' block
	// sizes) are checked alone; gentables checked them all.
	starters := same
	if raceEnabled {
		starters = slices.DeleteFunc(slices.Clone(same), func(c rune) bool { return c > 0xFFFF && c%17 != 0 })
	}
	for chunk := range slices.Chunk(starters, 16384) {
		b.Reset()
		for _, c := range chunk {
			b.WriteByte(' ')
			b.WriteRune(c)
		}
		alone = append(alone, b.String())
	}
	t.Logf("%d separators, %d token characters folding to themselves, %d others", len(seps), len(same), len(other))

	o := newOracle(t)
	for batch := range slices.Chunk(docs, 128) {
		sizes := o.index(batch)
		terms := o.terms(sizes)
		for i, d := range batch {
			checkTokens(t, d, sizes[i], terms[i])
		}
	}
	// Only sizes: reading back a term per code point would be slow too.
	sizes := o.index(alone)
	for i, d := range alone {
		if n := Count(d); n != sizes[i] {
			t.Fatalf("%d tokens in %s, FTS5 counted %d", n, show(d), sizes[i])
		}
	}
}

// classOf is how the tokenizer treats the scalar value c.
func classOf(c rune) (class int, fold rune) {
	if c < utf8.RuneSelf {
		if f := asciiFold[c]; f != 0 {
			return tokenChar, rune(f)
		}
		return separator, c
	}
	class, f := lookup(uint32(c))
	return class, rune(f)
}

// The pieces random text is made of: what session text holds, and the
// corners of unicode61.
var pieces = [][]string{
	{"a", "Z", "q", "0", "9", "_", "-", ".", "'", "\"", "(", ")", "/", "\\", "`", "#", "@"},
	{" ", " ", " ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028"},
	{"é", "É", "ü", "ñ", "Å", "ø", "Œ", "ß", "ł", "Ş", "ǅ", "İ", "ı", "ﬁ", "ẞ", "Ǆ", "Ǳ"},
	{"\u0300", "\u0301", "\u0308", "\u0327", "\u0331", "\u0332", "\u0483", "\u0903", "\u20dd", "\u200d", "\ufe0f"},
	{"α", "Ω", "ς", "Σ", "ά", "ΐ", "ж", "Я", "Ё", "ї", "א", "ع", "ह", "ก"},
	{"数", "据", "库", "连", "接", "の", "デ", "ー", "タ", "ｶ", "한", "국", "어", "ㄱ", "〇", "々"},
	{"😀", "🏳", "👍🏽", "❤", "\U0001FAE0", "🇯🇵", "\u2603"},
	{"\uE000", "\uF8FF", "\U000F0000", "\U0010FFFD", "\uFDD0", "\uFFFE", "\uFFFD", "\U0001FFFF"},
	{"Ａ", "ｚ", "１", "\u212A", "\u2126", "\u00b5", "\u00aa", "\u00b2", "\u2460", "\U00010400", "\U0001D400"},
	{"\x80", "\xbf", "\xc3", "\xe4\xb8", "\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80"},
}

// randomText strings together n pieces, mostly letters and spaces.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		k := r.IntN(len(pieces) + 3)
		if k >= len(pieces) {
			k = k % 2 // more ASCII letters and spaces
		}
		p := pieces[k]
		b.WriteString(p[r.IntN(len(p))])
	}
	return b.String()
}

// Random text mixing scripts, marks, emoji, private use, punctuation and
// invalid UTF-8 tokenizes as FTS5 tokenizes it: the same terms and count,
// and the byte ranges FTS5's highlight() marks.
func TestTokensMatchFTS5OnRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	o := newOracle(t)
	for range 300 {
		checkParity(t, o, randomText(r, 1+r.IntN(60)))
	}
}

// checkParity indexes doc alone and compares everything FTS5 says of it.
func checkParity(t testing.TB, o *oracle, doc string) {
	t.Helper()
	sizes := o.index([]string{doc})
	checkTokens(t, doc, sizes[0], o.terms(sizes)[0])
	toks := Tokens(nil, doc)
	if len(toks) == 0 || len(toks) > 200 || toks[len(toks)-1].End-toks[0].Start > 100000 {
		return
	}
	if strings.IndexByte(doc, 0) >= 0 {
		// highlight() builds its text with C strings, which end at a NUL;
		// a space is a separator as NUL is, at the same offsets.
		doc = strings.ReplaceAll(doc, "\x00", " ")
		o.index([]string{doc})
	}
	var want strings.Builder
	at := 0
	for _, tok := range toks {
		want.WriteString(doc[at:tok.Start])
		want.WriteString("[" + doc[tok.Start:tok.End] + "]")
		at = tok.End
	}
	want.WriteString(doc[at:])
	if got := o.highlight(toks, doc); got != want.String() {
		t.Fatalf("token ranges of %s: FTS5 highlights %s, Tokens %s", show(doc), show(got), show(want.String()))
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"", "Hello, World", "parseSessionHeader(raw) \uE000 parsesessionheader",
		"Crème brûlée x\u0301y e\u0301 \u0301 ǅ İ ß ﬁ \u212A ＡＢ",
		"请检查数据库连接池配置，データベースの接続を確認してください。데이터베이스를 확인하세요.",
		"Ελληνικά Русский עברית العربية हिन्दी ไทย",
		"😀 🏳️‍🌈 👍🏽 \U0001FAE0 \uE000 \U000F0000 \U0010FFFD \uFDD0 \uFFFE \uFFFD",
		"a\xaab a\xffb a\xc3 \xc0\x80 é\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xf8\x88\x80\x80\x80",
		"func main() {\n\tfmt.Println(\"héllo\") // TODO: ÉTÉ\n}\n",
	} {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(randomText(r, 40))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		checkParity(t, newOracle(t), doc)
	})
}

// Tokens allocates nothing for text that folding leaves alone, and one
// string for the folded Texts of a short text.
func TestTokensAllocateOnlyForFoldedText(t *testing.T) {
	dst := make([]Token, 0, 16)
	for _, c := range []struct {
		in   string
		want float64
	}{
		{"parse the session header 数据库 \uE000 straße", 0},
		{"Parse the Session header, café", 1},
	} {
		if got := testing.AllocsPerRun(100, func() { dst = Tokens(dst[:0], c.in) }); got != c.want {
			t.Errorf("Tokens(%q) allocates %v times, want %v", c.in, got, c.want)
		}
	}
	if got := testing.AllocsPerRun(100, func() { Count("Parse the Session header, café") }); got != 0 {
		t.Errorf("Count allocates %v times", got)
	}
}
