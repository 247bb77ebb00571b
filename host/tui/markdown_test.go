package tui

import (
	"strings"
	"testing"
)

// render lays Markdown out as plain rows at width.
func render(src string, width int) []string {
	th := newTheme(false)
	var out []string
	for _, l := range layoutParas(markdown(src, th.base, th), width, th) {
		var b strings.Builder
		for _, s := range l {
			b.WriteString(s.text)
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

func TestMarkdownBlocks(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"heading drops its markers", "## Plan ##", []string{"Plan"}},
		{"bullets and numbers", "- one\n* two\n3. three", []string{"• one", "• two", "3. three"}},
		{"nested list", "- outer\n  - inner", []string{"• outer", "  • inner"}},
		{"quote", "> quoted text", []string{"│ quoted text"}},
		{"code fence keeps its text", "```go\nif a*b_c {\n\treturn\n}\n```\nafter", []string{"▏ go", "▏ if a*b_c {", "▏     return", "▏ }", "after"}},
		{"unclosed fence runs to the end", "```\ncode", []string{"▏ code"}},
		{"rule", "---", []string{"────────────────────"}},
		{"blank lines stay", "a\n\nb", []string{"a", "", "b"}},
		{"table rows are kept", "| a | b |\n|---|---|", []string{"| a | b |", "|---|---|"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(tt.src, 20)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestMarkdownInline(t *testing.T) {
	th := newTheme(true)
	tests := []struct {
		src  string
		want []span
	}{
		{"a `code` b", []span{{"a ", th.base}, {"code", th.inline}, {" b", th.base}}},
		{"**bold** x", []span{{"bold", th.base.Bold(true)}, {" x", th.base}}},
		{"*it* x", []span{{"it", th.base.Italic(true)}, {" x", th.base}}},
		{"snake_case_name stays", []span{{"snake_case_name stays", th.base}}},
		{"2 * 3 * 4", []span{{"2 * 3 * 4", th.base}}},
		{`\*literal\*`, []span{{"*literal*", th.base}}},
		{"[docs](https://x.dev)", []span{{"docs", th.link}, {" (https://x.dev)", th.dim}}},
		{"`unclosed", []span{{"`unclosed", th.base}}},
		{"``a`b``", []span{{"a`b", th.inline}}},
	}
	for _, tt := range tests {
		got := inline(tt.src, th.base, th)
		if len(got) != len(tt.want) {
			t.Errorf("%q: got %v, want %v", tt.src, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: span %d = %+v, want %+v", tt.src, i, got[i], tt.want[i])
			}
		}
	}
}

func TestMarkdownNeverInterpretsTerminalSequences(t *testing.T) {
	rows := render("# \x1b]0;pwned\x07title\n- \x1b[2J", 60)
	joined := strings.Join(rows, "\n")
	if strings.ContainsAny(joined, "\x1b\x07") {
		t.Fatalf("raw control characters survived: %q", joined)
	}
	if !strings.Contains(joined, `\x1b]0;pwned\x07title`) || !strings.Contains(joined, `• \x1b[2J`) {
		t.Errorf("escapes not shown: %q", joined)
	}
}
