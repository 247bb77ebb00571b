package compositions

import (
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm/openai"
	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

// TestCodeDefaultsAreTheConfigDefaults pins the defaults that code applies
// to a zero field (a provider, MCP manager or session-query service built
// without a loaded config, as tests and embedders do) to the values of
// configs/default.yaml, the one source of defaults: a package that cannot
// decode its section there itself (it does not own it, or owning it would
// be an import cycle) keeps a constant, and this test keeps it honest.
func TestCodeDefaultsAreTheConfigDefaults(t *testing.T) {
	var (
		llmDefaults LLMConfig
		mcpDefaults mcp.Config
		sqDefaults  searchindex.Settings
	)
	for _, d := range []struct {
		decode func(any) error
		out    any
	}{
		{LLMSchema.DecodeDefaults, &llmDefaults},
		{mcp.ConfigSchema.DecodeDefaults, &mcpDefaults},
		{searchindex.ConfigSchema.DecodeDefaults, &sqDefaults},
	} {
		if err := d.decode(d.out); err != nil {
			t.Fatal(err)
		}
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		key        string
		code, yaml time.Duration
	}{
		{"llm.stream_idle_timeout_ms", openai.DefaultStreamIdleTimeout, ms(llmDefaults.StreamIdleTimeoutMs)},
		{"llm.request_timeout_ms", openai.DefaultRequestTimeout, ms(llmDefaults.RequestTimeoutMs)},
		{"llm.keepalive_limit_ms", openai.DefaultKeepAliveLimit, ms(llmDefaults.KeepAliveLimitMs)},
		{"mcp.start_timeout_ms", mcp.DefaultStartTimeout, ms(mcpDefaults.StartTimeoutMs)},
		{"mcp.call_timeout_ms", mcp.DefaultCallTimeout, ms(mcpDefaults.CallTimeoutMs)},
	} {
		if c.code != c.yaml {
			t.Errorf("%s: code default %s, configs/default.yaml %s", c.key, c.code, c.yaml)
		}
	}
	if got, want := sessionquery.DefaultConfig(), sqDefaults.ServiceConfig(); got != want {
		t.Errorf("sessionquery.DefaultConfig() = %+v, session_query's defaults %+v", got, want)
	}
	if got, want := searchindex.DefaultConfig(""), searchindex.ConfigFrom(sqDefaults); got != want {
		t.Errorf("searchindex.DefaultConfig() = %+v, session_query's defaults %+v", got, want)
	}
}
