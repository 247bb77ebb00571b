package hook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
)

type ctxKey struct{}

func named(name string, log *[]string) hook.Middleware[string, string] {
	return func(ctx context.Context, in string, next hook.Next[string, string]) string {
		*log = append(*log, name)
		return name + "(" + next(ctx, in) + ")"
	}
}

func TestChainRunsPrependedFirstThenRegistrationOrder(t *testing.T) {
	var c hook.Chain[string, string]
	var log []string
	c.Use(named("a", &log))
	c.Use(named("b", &log))
	c.Prepend(named("p1", &log))
	c.Prepend(named("p2", &log))
	out := c.Run(context.Background(), "x", func(_ context.Context, in string) string { return "end:" + in })
	if out != "p2(p1(a(b(end:x))))" || strings.Join(log, ",") != "p2,p1,a,b" {
		t.Fatalf("out %q log %v", out, log)
	}
}

func TestMiddlewareMayReplaceContextAndShortCircuit(t *testing.T) {
	var c hook.Chain[string, string]
	c.Use(func(ctx context.Context, in string, next hook.Next[string, string]) string {
		return next(context.WithValue(ctx, ctxKey{}, "deadline"), in)
	})
	got := c.Run(context.Background(), "x", func(ctx context.Context, _ string) string { return ctx.Value(ctxKey{}).(string) })
	if got != "deadline" {
		t.Fatalf("terminal saw %q", got)
	}
	remove := c.Prepend(func(context.Context, string, hook.Next[string, string]) string { return "blocked" })
	if got := c.Run(context.Background(), "x", func(context.Context, string) string { return "ran" }); got != "blocked" {
		t.Fatalf("short circuit: %q", got)
	}
	remove()
	remove()
	if c.Len() != 1 {
		t.Fatalf("Len after remove = %d", c.Len())
	}
}

func TestObserversRunInOrderAndContainPanics(t *testing.T) {
	var o hook.Observers[int]
	var got []int
	var panics []any
	o.Subscribe(func(e int) { got = append(got, e) })
	unsub := o.Subscribe(func(int) { panic("observer bug") })
	o.Subscribe(func(e int) { got = append(got, e*10) })
	o.Emit(1, func(v any) { panics = append(panics, v) })
	unsub()
	o.Emit(2, nil)
	if len(got) != 4 || got[0] != 1 || got[1] != 10 || got[2] != 2 || got[3] != 20 || len(panics) != 1 {
		t.Fatalf("got %v panics %v", got, panics)
	}
}
