package session

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func titleEv(seq int, data string) Event {
	return Event{Type: TypeSessionTitle, Seq: seq, Time: int64(5000 + seq), Data: json.RawMessage(data)}
}

func TestFoldTitleWithoutATitleEventIsAbsent(t *testing.T) {
	got, err := FoldTitle([]Event{userEv(0, "hi"), assistantEv(1, "hello")})
	if got != nil || err != nil {
		t.Fatalf("FoldTitle = %+v, %v; want nil, nil", got, err)
	}
}

func TestFoldTitleTakesTheLastTitleEvent(t *testing.T) {
	events := []Event{
		userEv(0, "Reply with exactly the word: pong"),
		titleEv(1, `{"title":"Reply with exactly the word:","messageSeqs":[0],"source":{"kind":"fallback"}}`),
		userEv(2, "next"),
		titleEv(3, `{"title":"Ping pong","messageSeqs":[0,2],"source":{"kind":"provider","provider":"llm","model":{"provider":"deepseek","model":"deepseek-v4-flash"}}}`),
		logEv(4, TypeTurnEnd, nil),
	}
	got, err := FoldTitle(events)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"title":"Ping pong","messageSeqs":[0,2],"source":{"kind":"provider","provider":"llm","model":{"provider":"deepseek","model":"deepseek-v4-flash"}},"eventSeq":3,"updatedAt":5003}`
	if string(b) != want {
		t.Fatalf("title = %s\nwant    %s", b, want)
	}
	// The snapshot shares nothing with the log.
	got.MessageSeqs[0] = 42
	got.Source[2] = 'X'
	again, _ := FoldTitle(events)
	if again.MessageSeqs[0] != 0 || !strings.HasPrefix(string(again.Source), `{"kind"`) || !strings.Contains(string(events[3].Data), `{"kind":"provider"`) {
		t.Fatalf("mutating the snapshot changed the log: %+v", again)
	}
}

func TestFoldTitleAcceptsAUserRenameWithNoMessageSeqs(t *testing.T) {
	got, err := FoldTitle([]Event{titleEv(0, `{"title":"My session","messageSeqs":[],"source":{"kind":"user"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "My session" || got.MessageSeqs == nil || len(got.MessageSeqs) != 0 || got.EventSeq != 0 || got.UpdatedAt != 5000 {
		t.Fatalf("title = %+v", got)
	}
}

func TestFoldTitleRejectsAMalformedLastTitle(t *testing.T) {
	cases := []struct {
		name, data, msg string
	}{
		{"messageSeqs missing", `{"title":"t","source":{"kind":"fallback"}}`, "messageSeqs is missing"},
		{"messageSeqs null", `{"title":"t","messageSeqs":null,"source":{"kind":"fallback"}}`, "messageSeqs must be an array of event seqs"},
		{"messageSeqs with a string", `{"title":"t","messageSeqs":["0"],"source":{"kind":"fallback"}}`, "messageSeqs must be an array of event seqs"},
		{"empty title", `{"title":"","messageSeqs":[0],"source":{"kind":"fallback"}}`, "title must not be empty"},
		{"title missing", `{"messageSeqs":[0],"source":{"kind":"fallback"}}`, "title must be a string"},
		{"title not a string", `{"title":7,"messageSeqs":[0],"source":{"kind":"fallback"}}`, "title must be a string"},
		{"source missing", `{"title":"t","messageSeqs":[0]}`, "source is missing"},
		{"source not an object", `{"title":"t","messageSeqs":[0],"source":"fallback"}`, "source must be an object"},
		{"source kind missing", `{"title":"t","messageSeqs":[0],"source":{}}`, "source.kind is missing"},
		{"unknown source kind", `{"title":"t","messageSeqs":[0],"source":{"kind":"robot"}}`, `source.kind "robot" is not fallback, provider or user`},
		{"provider without provider id", `{"title":"t","messageSeqs":[0],"source":{"kind":"provider"}}`, "source.provider must be a non-empty string"},
		{"provider with a bad model", `{"title":"t","messageSeqs":[0],"source":{"kind":"provider","provider":"p","model":{"provider":"x"}}}`, "source.model must be {provider, model}"},
		{"data not an object", `[1]`, "data is not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := []Event{
				titleEv(0, `{"title":"good","messageSeqs":[],"source":{"kind":"user"}}`),
				titleEv(1, tc.data),
			}
			got, err := FoldTitle(events)
			var te *TitleError
			if got != nil || !errors.As(err, &te) {
				t.Fatalf("FoldTitle = %+v, %v; want a *TitleError", got, err)
			}
			if te.Seq != 1 || te.Message != tc.msg {
				t.Fatalf("error = seq %d %q, want seq 1 %q", te.Seq, te.Message, tc.msg)
			}
			if want := "session/title event 1 is malformed: " + tc.msg; err.Error() != want {
				t.Fatalf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestFoldTitleIgnoresMalformedEarlierTitles(t *testing.T) {
	events := []Event{
		titleEv(0, `{"title":""}`),
		titleEv(1, `{"title":"fine","messageSeqs":[],"source":{"kind":"user"}}`),
	}
	got, err := FoldTitle(events)
	if err != nil || got.Title != "fine" {
		t.Fatalf("FoldTitle = %+v, %v", got, err)
	}
}

func TestFallbackTitle(t *testing.T) {
	cases := []struct {
		name, prompt, want string
	}{
		{"first five words of the pinned fixture", "Reply with exactly the word: pong", "Reply with exactly the word:"},
		{"fewer than five words", "fix the bug", "fix the bug"},
		{"whitespace collapsed and trimmed", "  fix\tthe\n\n bug\u00a0\u3000now  ", "fix the bug now"},
		{"five words over 40 bytes back off to a word boundary", "Please investigate intermittent authentication failures in CI", "Please investigate intermittent"},
		{"one long word is cut mid-word", "Supercalifragilisticexpialidocious-antidisestablishmentarianism rocks", "Supercalifragilisticexpialidocious-antid"},
		{"a long last word that would waste the budget is cut", "Fix internationalization-infrastructure-initialization", "Fix internationalization-infrastructure-"},
		{"CJK without spaces is cut on a character boundary", "请帮我重构会话存储层并且为并发写入添加测试用例", "请帮我重构会话存储层并且为"},
		{"CJK words separated by spaces", "修复 会话 存储 的 并发 写入 问题", "修复 会话 存储 的 并发"},
		{"emoji kept whole", "🚀 ship the release today please now", "🚀 ship the release today"},
		{"flags are never split", "🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵", "🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵"},
		{"family emoji kept whole when it fits", "Plan the trip 👨‍👩‍👧‍👦👨‍👩‍👧‍👦", "Plan the trip 👨‍👩‍👧‍👦"},
		{"family emoji dropped whole rather than split", "Plan our trip now 👨‍👩‍👧‍👦", "Plan our trip now"},
		{"terminal escapes removed", "\x1b[31mred\x1b[0m alert \x1b]0;pwned\x07now", "red alert now"},
		{"bidi and invisible controls removed", "\u202eevil\u202c zero\u200bwidth \ufefftext", "evil zerowidth text"},
		{"C1 CSI removed", "a\u009b31mb c", "ab c"},
		{"invalid UTF-8 dropped", "caf\xe9 ok", "caf ok"},
		{"empty prompt", "", ""},
		{"only whitespace and controls", " \t\n\x00\x07 \u200b ", ""},
		{"only escapes", "\x1b[2J\x1b[H", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := FallbackTitle(tc.prompt)
			if got != tc.want {
				t.Fatalf("FallbackTitle(%q) = %q, want %q", tc.prompt, got, tc.want)
			}
			if len(got) > FallbackTitleBytes || !utf8.ValidString(got) || len(strings.Fields(got)) > FallbackTitleWords {
				t.Fatalf("FallbackTitle(%q) = %q breaks the limits", tc.prompt, got)
			}
			if got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
				t.Fatalf("FallbackTitle(%q) = %q is not collapsed", tc.prompt, got)
			}
		})
	}
}

func TestFallbackTitleForSeparatesTextBlocksAndIgnoresOthers(t *testing.T) {
	m := Message{Role: RoleUser, Source: UserSource, ID: "u", Content: []ContentBlock{
		TextBlock("hello"),
		{Type: BlockImage, Raw: json.RawMessage(`{"type":"image"}`)},
		TextBlock("world"),
	}}
	if got := FallbackTitleFor(m); got != "hello world" {
		t.Fatalf("FallbackTitleFor = %q, want %q", got, "hello world")
	}
}

func TestNormalizeTitle(t *testing.T) {
	if got := NormalizeTitle("  My\x1b[1m  session\n", 0); got != "My session" {
		t.Fatalf("NormalizeTitle = %q", got)
	}
	long := strings.Repeat("word ", 30)
	if got := NormalizeTitle(long, 0); len(got) > MaxTitleBytes || strings.HasSuffix(got, " ") || !strings.HasPrefix(got, "word word") {
		t.Fatalf("NormalizeTitle(long) = %q (%d bytes)", got, len(got))
	}
	if got := NormalizeTitle("\u200b\u200e", 10); got != "" {
		t.Fatalf("invisible title = %q, want empty", got)
	}
}

func TestCutTitleFallsBackToRunesForAnOversizedCluster(t *testing.T) {
	zalgo := "e" + strings.Repeat("\u0301", 40) // one grapheme cluster of 81 bytes
	got := cutTitle(zalgo, 10)
	if len(got) > 10 || !utf8.ValidString(got) || got == "" {
		t.Fatalf("cutTitle = %q", got)
	}
	if !strings.HasPrefix(got, "e") {
		t.Fatalf("cut lost the base letter: %q", got)
	}
}
