package searchtext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchText returns about 1 MB of text of each kind the index holds:
// code with English comments (this package's own sources), European prose
// with diacritics, and CJK mixed with identifiers.
func benchText(b *testing.B) map[string]string {
	b.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		b.Fatalf("no sources to read: %v", err)
	}
	var code strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		code.Write(src)
	}
	const mb = 1 << 20
	fill := func(s string) string { return strings.Repeat(s, mb/len(s)+1)[:mb] }
	return map[string]string{
		"code":     fill(code.String()),
		"european": fill("Le système vérifie la connexion à la base de données; Überprüfen Sie die Größe der Datei. El niño está aquí — façade, naïve, Ærøskøbing. "),
		"cjk":      fill("请检查数据库连接池配置 poolSize，データベースの接続を確認してください。데이터베이스를 확인하세요 (sessionQuery). "),
	}
}

// Every indexed document is tokenized once per rebuild (about 300 MB):
// throughput per kind of text, and allocations (only folded tokens).
func BenchmarkTokens(b *testing.B) {
	texts := benchText(b)
	for _, name := range []string{"code", "european", "cjk"} {
		text := texts[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			var toks []Token
			for b.Loop() {
				toks = Tokens(toks[:0], text)
			}
		})
	}
}

func BenchmarkCount(b *testing.B) {
	texts := benchText(b)
	for _, name := range []string{"code", "european", "cjk"} {
		text := texts[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Count(text)
			}
		})
	}
}
