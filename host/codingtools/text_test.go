package codingtools

import (
	"strings"
	"testing"
)

func TestLooksBinary(t *testing.T) {
	cases := []struct {
		name   string
		sample string
		want   bool
	}{
		{"empty", "", false},
		{"ascii", "package main\n", false},
		{"utf-8", "naïve café — ok\n", false},
		{"a stray latin-1 byte", "caf\xe9 au lait, with plenty of plain text around it\n", false},
		{"nul byte", "abc\x00def", true},
		{"mostly invalid", "\xff\xfe\xfd\xfc\xfb ab", true},
		{"rune cut by the sample end", strings.Repeat("a", 20) + "\xe2\x82", false},
	}
	for _, tc := range cases {
		if got := looksBinary([]byte(tc.sample)); got != tc.want {
			t.Errorf("%s: looksBinary = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLineReaderSplitsAndCutsLines(t *testing.T) {
	type line struct {
		text string
		cut  int
	}
	cases := []struct {
		name  string
		input string
		keep  int
		want  []line
	}{
		{"lf and crlf", "a\r\nb\nc", 10, []line{{"a", 0}, {"b", 0}, {"c", 0}}},
		{"empty lines", "\n\n", 10, []line{{"", 0}, {"", 0}}},
		{"line of exactly keep bytes with crlf", "abcd\r\nx\n", 4, []line{{"abcd", 0}, {"x", 0}}},
		{"cut counts the rest without the terminator", "abcdefgh\r\n", 3, []line{{"abc", 5}}},
		{"cut never splits a rune", "aé\n", 2, []line{{"a", 2}}},
		{"longer than the reader's buffer", strings.Repeat("z", 200000) + "\nend", 5, []line{{"zzzzz", 199995}, {"end", 0}}},
		{"lone carriage return stays", "a\rb\n", 10, []line{{"a\rb", 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lr := newLineReader(strings.NewReader(tc.input), tc.keep)
			var got []line
			for {
				l, cut, ok := lr.next()
				if !ok {
					break
				}
				got = append(got, line{string(l), cut})
			}
			if lr.err != nil {
				t.Fatal(lr.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("line %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
