package acp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestOutboxDeliversInOrderAndFlushWaitsForQueuedUpdates(t *testing.T) {
	var (
		mu   sync.Mutex
		sent []string
	)
	gate := make(chan struct{})
	o := newOutbox(func(u sdk.SessionUpdate) error {
		<-gate
		mu.Lock()
		sent = append(sent, u.AgentMessageChunk.Content.Text.Text)
		mu.Unlock()
		return nil
	}, nil)
	o.Push(sdk.UpdateAgentMessageText("a"), sdk.UpdateAgentMessageText("b"))
	o.Push(sdk.UpdateAgentMessageText("c"))
	flushed := make(chan error, 1)
	go func() { flushed <- o.Flush(context.Background()) }()
	select {
	case <-flushed:
		t.Fatal("Flush returned before the queued updates were written")
	default:
	}
	close(gate)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(sent)
	mu.Unlock()
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("sent = %v", got)
	}
	o.Close()
	o.Push(sdk.UpdateAgentMessageText("late"))
	if err := o.Flush(context.Background()); err != nil {
		t.Errorf("Flush after Close = %v", err)
	}
}

func TestOutboxReportsOnlyTheFirstFailure(t *testing.T) {
	var reported []error
	o := newOutbox(func(sdk.SessionUpdate) error { return errors.New("pipe closed") }, func(err error) { reported = append(reported, err) })
	o.Push(sdk.UpdateAgentMessageText("a"), sdk.UpdateAgentMessageText("b"), sdk.UpdateAgentMessageText("c"))
	o.Close()
	if len(reported) != 1 {
		t.Errorf("reported %d failures, want 1", len(reported))
	}
}

func TestFenceOutlastsBacktickRunsInsideTheText(t *testing.T) {
	cases := map[string]string{
		"plain\n":     "```console\nplain\n```",
		"a ``` b":     "````console\na ``` b\n````",
		"x ````` y\n": "``````console\nx ````` y\n``````",
	}
	for in, want := range cases {
		if got := fence(in, "console"); got != want {
			t.Errorf("fence(%q) = %q, want %q", in, got, want)
		}
	}
}
