package tools

import (
	"context"
	"io"
)

// A tool body whose output grows while it runs (bash) tees it into the
// live-output writer of its context, so a front end can show it before the
// call ends. Front ends install one per call through an Execute wrapper;
// the result the model sees is unaffected.

type liveOutputKey struct{}

// WithLiveOutput returns ctx carrying w as the call's live-output writer.
// w receives the output in order from one goroutine at a time and must not
// block on the front end; its errors are ignored.
func WithLiveOutput(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, liveOutputKey{}, w)
}

// LiveOutput returns the live-output writer of ctx, or nil.
func LiveOutput(ctx context.Context) io.Writer {
	w, _ := ctx.Value(liveOutputKey{}).(io.Writer)
	return w
}
