package spill

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// BenchmarkPolicyPassThrough measures what every ordinary call pays.
func BenchmarkPolicyPassThrough(b *testing.B) {
	p := NewPolicy(&fakeStore{}, 50000, nil)
	in := tools.PostInput{
		Call:   &tools.Call{Name: "bash"},
		Result: tools.Result{Content: []session.ContentBlock{session.TextBlock(strings.Repeat("x", 4000))}},
	}
	next := func(context.Context, tools.PostInput) tools.PostDecision {
		return tools.PostDecision{Kind: tools.Accept}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p.PostExecute(ctx, in, next)
	}
}

// BenchmarkReplacement1MiB measures building the preview of a large result.
func BenchmarkReplacement1MiB(b *testing.B) {
	text := strings.Repeat("0123456789abcdé\n", 1<<16)
	ref := Ref{Locator: "/tmp/dsh-spill-123456/session-0123456789ab/0123456789ab-bash.txt", RetrievalHint: RetrievalHint}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := replacement(text, ref, 50000); !ok {
			b.Fatal("did not fit")
		}
	}
}

// BenchmarkLocalStoreSave measures one spill to disk, fsync included.
func BenchmarkLocalStoreSave(b *testing.B) {
	s, err := NewLocalStore(LocalOptions{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("line of output\n", 10000)
	req := SaveRequest{SessionID: "bench", SuggestedName: "bash.txt", Content: content}
	ctx := context.Background()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, err := s.SaveText(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
