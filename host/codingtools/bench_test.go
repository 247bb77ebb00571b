package codingtools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree writes dirs×files small Go files with one needle in each dir.
func benchTree(b *testing.B, dirs, files int) string {
	b.Helper()
	ws := b.TempDir()
	writeFile(b, filepath.Join(ws, ".gitignore"), "*.tmp\nvendor/\n")
	body := strings.Repeat("func f() int { return 42 } // filler text\n", 40)
	for d := 0; d < dirs; d++ {
		for f := 0; f < files; f++ {
			content := "package p\n" + body
			if f == 0 {
				content += "// NEEDLE\n"
			}
			writeFile(b, filepath.Join(ws, fmt.Sprintf("pkg%03d", d), fmt.Sprintf("f%03d.go", f)), content)
		}
	}
	return ws
}

func BenchmarkGrepTree(b *testing.B) {
	ws := benchTree(b, 40, 50)
	s, _ := New(DefaultConfig(), Options{})
	call := mkCall(b, "grep", nil, ws, map[string]any{"pattern": "NEEDLE", "output_mode": "content"})
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.grep(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGlobTree(b *testing.B) {
	ws := benchTree(b, 40, 50)
	s, _ := New(DefaultConfig(), Options{})
	call := mkCall(b, "glob", nil, ws, map[string]any{"pattern": "**/*.go"})
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.glob(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadLargeFile(b *testing.B) {
	ws := b.TempDir()
	writeFile(b, filepath.Join(ws, "big.txt"), strings.Repeat("some line of ordinary source text\n", 200000))
	s, _ := New(DefaultConfig(), Options{})
	call := mkCall(b, "read", nil, ws, map[string]any{"file_path": "big.txt", "offset": 100000})
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.read(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
