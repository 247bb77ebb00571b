package searchtext

import (
	"strings"
	"testing"
)

// The form is computed for every indexed document and every hit's snippet:
// what it costs per byte of plain prose (the fast path), code and CJK.
func BenchmarkSegment(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"prose", strings.Repeat("the quick brown fox jumps over the lazy dog. ", 200)},
		{"code", strings.Repeat("func parseSessionHeader(raw string) (*SessionHeader, error) { return loadHTTPConfig(raw) }\n", 100)},
		{"cjk", strings.Repeat("请检查数据库连接池配置，データベースの接続を確認してください。데이터베이스를 확인하세요. ", 100)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				Segment(c.text)
			}
		})
	}
}
