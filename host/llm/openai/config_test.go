package openai

import (
	"reflect"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
)

func TestNewRejectsInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"relative base url", Config{BaseURL: "api.deepseek.com"}, "base url"},
		{"unknown thinking mode", Config{Thinking: "auto"}, "thinking must be"},
		{"unknown effort", Config{ReasoningEffort: "medium"}, "reasoning effort must be"},
		{"effort with thinking disabled", Config{Thinking: ThinkingDisabled, ReasoningEffort: "max"}, "needs thinking"},
		{"effort on the openai flavour", Config{Name: NameOpenAI, ReasoningEffort: "high"}, "needs the deepseek wire extensions"},
		{"negative timeout", Config{StreamIdleTimeout: -1}, "timeouts must not be negative"},
		{"negative max tokens", Config{MaxTokens: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}

func TestRouteDefaults(t *testing.T) {
	ds := newProvider(t, Config{})
	if ds.Name() != "deepseek" || ds.endpoint != "https://api.deepseek.com/chat/completions" || ds.cfg.APIKeyEnv != "DEEPSEEK_API_KEY" {
		t.Fatalf("deepseek defaults: name %q endpoint %q env %q", ds.Name(), ds.endpoint, ds.cfg.APIKeyEnv)
	}
	oa := newProvider(t, Config{Name: NameOpenAI})
	if oa.endpoint != "https://api.openai.com/v1/chat/completions" || oa.cfg.APIKeyEnv != "OPENAI_API_KEY" || oa.cfg.DeepSeek {
		t.Fatalf("openai defaults: endpoint %q env %q deepseek %v", oa.endpoint, oa.cfg.APIKeyEnv, oa.cfg.DeepSeek)
	}
	custom := newProvider(t, Config{Name: "local", BaseURL: "http://localhost:8000/v1/", DeepSeek: true})
	if custom.endpoint != "http://localhost:8000/v1/chat/completions" || !custom.cfg.DeepSeek {
		t.Fatalf("custom route: endpoint %q deepseek %v", custom.endpoint, custom.cfg.DeepSeek)
	}
}

func TestModelInfo(t *testing.T) {
	all := []string{"off", "low", "high", "max"}
	tests := []struct {
		name string
		cfg  Config
		id   string
		want llm.ModelInfo
	}{
		{"deepseek catalog model", Config{}, "deepseek-v4-pro", llm.ModelInfo{ID: "deepseek-v4-pro", Name: "DeepSeek-V4-Pro",
			ContextWindow: 1000000, DefaultMaxTokens: 256000, Efforts: all, DefaultEffort: "high"}},
		{"unlisted id passes through with route defaults", Config{}, "deepseek-next", llm.ModelInfo{ID: "deepseek-next", Name: "deepseek-next",
			ContextWindow: 1000000, DefaultMaxTokens: 256000, Efforts: all, DefaultEffort: "high"}},
		{"configured effort is the default", Config{ReasoningEffort: "max"}, "deepseek-v4-flash", llm.ModelInfo{ID: "deepseek-v4-flash",
			Name: "DeepSeek-V4-Flash", ContextWindow: 1000000, DefaultMaxTokens: 256000, Efforts: all, DefaultEffort: "max"}},
		{"thinking disabled offers only off", Config{Thinking: ThinkingDisabled}, "deepseek-v4-flash", llm.ModelInfo{ID: "deepseek-v4-flash",
			Name: "DeepSeek-V4-Flash", ContextWindow: 1000000, DefaultMaxTokens: 256000, Efforts: []string{"off"}, DefaultEffort: "off"}},
		{"catalog values win", Config{Models: []llm.ModelInfo{{ID: "m", ContextWindow: 64000, DefaultMaxTokens: 8000}}}, "m",
			llm.ModelInfo{ID: "m", Name: "m", ContextWindow: 64000, DefaultMaxTokens: 8000, Efforts: all, DefaultEffort: "high"}},
		{"openai knows nothing it was not told", Config{Name: NameOpenAI}, "gpt-4.1", llm.ModelInfo{ID: "gpt-4.1", Name: "gpt-4.1"}},
		{"openai with configured capacity", Config{Name: NameOpenAI, ContextWindow: 128000, MaxTokens: 16000}, "gpt-4.1",
			llm.ModelInfo{ID: "gpt-4.1", Name: "gpt-4.1", ContextWindow: 128000, DefaultMaxTokens: 16000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newProvider(t, tt.cfg).Model(tt.id); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Model(%q) = %+v\nwant %+v", tt.id, got, tt.want)
			}
		})
	}
}

func TestModelsListsTheDefaultCatalog(t *testing.T) {
	var ids []string
	for _, m := range newProvider(t, Config{}).Models() {
		ids = append(ids, m.ID+"="+m.Name)
	}
	if got := strings.Join(ids, ","); got != "deepseek-v4-flash=DeepSeek-V4-Flash,deepseek-v4-pro=DeepSeek-V4-Pro" {
		t.Fatalf("Models() = %s", got)
	}
	if got := newProvider(t, Config{Name: NameOpenAI}).Models(); len(got) != 0 {
		t.Fatalf("openai catalog = %+v, want empty", got)
	}
}
