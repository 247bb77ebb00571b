package benchcorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// commonWords are frequent English words; the first ones dominate, giving
// the text a Zipf-like skew.
var commonWords = strings.Fields(`the to and of a in is it that for you this with on be are not
as we can was have but if will or by at an from so all do there which one file test
function error code value change need should would make use run check update add
new fix build config data type return line read write path time case call list set
first using then when also now only just like more into some what about this other
output input result first value before after still because first again support case
handler request response server client cache index query search session event token
model prompt context window message stream chunk tool result status failure retry`)

// rareWords are the long tail: many distinct words, each seldom seen.
var rareWords = func() []string {
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br cl dr fl gr pl st tr")
	vowels := strings.Fields("a e i o u ai ea io ou")
	codas := strings.Fields("n r s t l m nd st rk ck")
	var out []string
	for _, o := range onsets {
		for _, v := range vowels {
			for _, c := range codas {
				out = append(out, o+v+c)
			}
		}
	}
	return out
}()

var identParts = strings.Fields(`parse load save read write build index search query session event
token config manifest workspace handler request response cache store writer reader stream
chunk tool result status retry file path buffer limit cursor page filter record header`)

var cjkWords = strings.Fields(`我们 需要 修复 功能 测试 代码 文件 错误 配置 会话 查询 结果 用户 服务 数据 更新 问题 检查 运行 构建`)

var extensions = strings.Fields(".go .ts .py .md .json .yaml .rs")

// words returns n words: mostly common ones (skewed towards the head of
// the list), some from the long tail.
func words(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		if r.IntN(10) < 8 {
			// Squaring a uniform draw skews towards the most common words.
			u := r.Float64()
			b.WriteString(commonWords[int(u*u*float64(len(commonWords)))])
		} else {
			b.WriteString(rareWords[r.IntN(len(rareWords))])
		}
	}
	return b.String()
}

func sentence(r *rand.Rand) string {
	return upperFirst(words(r, 6+r.IntN(14))) + "."
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func paragraph(r *rand.Rand, sentences int) string {
	parts := make([]string, sentences)
	for i := range parts {
		parts[i] = sentence(r)
	}
	return strings.Join(parts, " ")
}

func identifier(r *rand.Rand) string {
	a := identParts[r.IntN(len(identParts))]
	b := identParts[r.IntN(len(identParts))]
	if r.IntN(2) == 0 {
		return a + strings.ToUpper(b[:1]) + b[1:]
	}
	return a + "_" + b
}

func filePath(r *rand.Rand) string {
	depth := 1 + r.IntN(3)
	parts := make([]string, depth)
	for i := range parts {
		parts[i] = identParts[r.IntN(len(identParts))]
	}
	return "/src/" + strings.Join(parts, "/") + extensions[r.IntN(len(extensions))]
}

// requestID is a random hyphenated id, almost always unique.
func requestID(r *rand.Rand) string {
	return fmt.Sprintf("req-%04x-%02x", r.IntN(1<<16), r.IntN(1<<8))
}

func cjkSentence(r *rand.Rand) string {
	n := 4 + r.IntN(8)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = cjkWords[r.IntN(len(cjkWords))]
	}
	return strings.Join(parts, " ") + "。"
}

// mixedSalt seeds the mixed-script stream (builder.mixed).
const mixedSalt = 0x6d69786564

// IdentifierForms are the spellings of one identifier that mixed sentences
// use; each holds IdentifierPart as a run of its parts.
var IdentifierForms = []string{"loadSessionHeader", "LoadSessionHeader", "load_session_header", "load-session-header", "session_header.go"}

// mixedSentence is text as people write it beside English: an unspaced
// Chinese run (sometimes holding CJKInRun), Japanese with kana and kanji,
// Korean with a particle attached, an identifier in one of its forms, or
// one of the words a part query must not find (BRAID, category) or must
// (OpenAI, for AI).
func mixedSentence(r *rand.Rand) string {
	switch r.IntN(8) {
	case 0, 1:
		run := cjkRun(r)
		if r.IntN(2) == 0 {
			run = "请检查" + CJKInRun + "连接池配置" + run
		}
		return run + "。"
	case 2:
		return "この" + JapaneseWord + "の接続を確認してください。"
	case 3:
		return KoreanWord + "를 확인하세요."
	case 4, 5:
		return "Rename " + IdentifierForms[r.IntN(len(IdentifierForms))] + " before the release."
	case 6:
		return "A BRAID of category labels."
	}
	return "Ask the OpenAI API again."
}

// cjkRun is 2–6 CJK words written as Chinese is, without spaces.
func cjkRun(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(5) {
		b.WriteString(cjkWords[r.IntN(len(cjkWords))])
	}
	return b.String()
}

// sourceCode is a plausible source file of about size bytes.
func sourceCode(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		name := identifier(r)
		fmt.Fprintf(&b, "func %s(%s string, %s int) error {\n", name, identifier(r), identifier(r))
		for range 2 + r.IntN(6) {
			fmt.Fprintf(&b, "\tif err := %s(%q); err != nil {\n\t\treturn fmt.Errorf(\"%s: %%w\", err)\n\t}\n",
				identifier(r), filePath(r), words(r, 3))
		}
		b.WriteString("\treturn nil\n}\n\n")
	}
	return b.String()
}

// commandOutput is test or build output of about size bytes.
func commandOutput(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "--- FAIL: Test%s (0.%02ds)\n    %s:%d: %s\n", upperFirst(identifier(r)), r.IntN(100), filePath(r), 1+r.IntN(400), sentence(r))
		case 1:
			fmt.Fprintf(&b, "ok  \tgithub.com/example/%s\t0.%03ds\n", identParts[r.IntN(len(identParts))], r.IntN(1000))
		case 2:
			fmt.Fprintf(&b, "%s:%d:%d: %s\n", filePath(r), 1+r.IntN(900), 1+r.IntN(80), words(r, 8))
		default:
			fmt.Fprintf(&b, "[%s] %s %s\n", requestID(r), identifier(r), words(r, 6))
		}
	}
	return b.String()
}
