package agent

import (
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestNewRefusesALogWithAnOpenTurn(t *testing.T) {
	hdr := session.Header{ID: "s", CreatedAt: 1}
	live := session.NewLive(hdr, nil, session.LiveOptions{})
	if _, err := live.Append(session.TypeTurnStart, session.TurnStart{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Live: live, Provider: newFakeProvider(t), Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "never ended") {
		t.Errorf("New = %v", err)
	}
}

func TestNewRequiresAModelWhenTheLogHasNone(t *testing.T) {
	live := session.NewLive(session.Header{ID: "s", CreatedAt: 1}, nil, session.LiveOptions{})
	if _, err := New(Options{Live: live, Provider: newFakeProvider(t)}); err == nil || !strings.Contains(err.Error(), "Options.Model") {
		t.Errorf("New without a model = %v", err)
	}
}

func TestNewValidatesAResumedLog(t *testing.T) {
	hdr := session.Header{ID: "s", CreatedAt: 1}
	bad := []session.Event{{Type: session.TypeUserMessage, Seq: 0, Data: []byte(`{"content":[],"source":{"kind":"user"},"role":"user","id":"u"}`)}}
	live := session.NewLive(hdr, bad, session.LiveOptions{})
	_, err := New(Options{Live: live, Provider: newFakeProvider(t), Model: "m", Resumed: true})
	if err == nil || !strings.Contains(err.Error(), "cannot be continued") {
		t.Errorf("New over a log without surfaceOp = %v", err)
	}
}

func TestNewRequiresALiveSessionAndAProvider(t *testing.T) {
	live := session.NewLive(session.Header{ID: "s", CreatedAt: 1}, nil, session.LiveOptions{})
	if _, err := New(Options{Provider: newFakeProvider(t), Model: "m"}); err == nil {
		t.Error("New without a Live succeeded")
	}
	if _, err := New(Options{Live: live, Model: "m"}); err == nil {
		t.Error("New without a Provider succeeded")
	}
}

func TestNewRejectsInvalidPolicies(t *testing.T) {
	live := session.NewLive(session.Header{ID: "s", CreatedAt: 1}, nil, session.LiveOptions{})
	bad := llm.DefaultRetryPolicy()
	bad.InitialDelay = -1
	for name, o := range map[string]Options{
		"retry":      {Retry: bad},
		"threshold":  {Compaction: CompactionConfig{ThresholdRatio: 1.5}},
		"retainment": {Compaction: CompactionConfig{RetainRatio: 1}},
	} {
		o.Live, o.Provider, o.Model = live, newFakeProvider(t), "m"
		if a, err := New(o); err == nil {
			a.Close()
			t.Errorf("%s: New accepted an invalid policy", name)
		}
	}
	_, err := New(Options{Live: live, Provider: newFakeProvider(t), Model: "m", Compaction: CompactionConfig{RetainRatio: 0.9}})
	if err == nil || !strings.Contains(err.Error(), `config key "compaction.retain_ratio" must be less than compaction.threshold_ratio (0.8)`) {
		t.Errorf("New with a retain ratio above the threshold: %v", err)
	}
}

// TestZeroSettingsTakeTheConfigDefaults pins the one source of the agent's
// defaults: the agent and compaction sections of configs/default.yaml.
func TestZeroSettingsTakeTheConfigDefaults(t *testing.T) {
	var (
		cfg  Config
		comp CompactionConfig
	)
	if err := ConfigSchema.DecodeDefaults(&cfg); err != nil {
		t.Fatal(err)
	}
	if err := CompactionSchema.DecodeDefaults(&comp); err != nil {
		t.Fatal(err)
	}
	o := withDefaults(Options{Compaction: CompactionConfig{Enabled: true}})
	comp.Enabled = true
	if o.Compaction != comp || o.MaxParallelToolCalls != cfg.MaxParallelToolCalls || o.InstructionsMaxBytes != cfg.InstructionsMaxBytes {
		t.Errorf("defaults: compaction %+v (want %+v), parallel %d, instructions %d", o.Compaction, comp, o.MaxParallelToolCalls, o.InstructionsMaxBytes)
	}
	if comp.RetainRatio != 0.1 || cfg.MaxParallelToolCalls != 10 {
		t.Errorf("default.yaml: retain_ratio %v, max_parallel_tool_calls %d", comp.RetainRatio, cfg.MaxParallelToolCalls)
	}
}
