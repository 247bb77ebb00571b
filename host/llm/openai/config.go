package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
)

// Provider route names with built-in defaults.
const (
	NameDeepSeek = "deepseek"
	NameOpenAI   = "openai"
)

// Thinking modes for Config.Thinking.
const (
	ThinkingEnabled  = "enabled"
	ThinkingDisabled = "disabled"
)

// Reasoning efforts accepted by the DeepSeek flavour. "off" is harness
// vocabulary: it disables thinking and is never sent as reasoning_effort.
const (
	EffortOff  = "off"
	EffortLow  = "low"
	EffortHigh = "high"
	EffortMax  = "max"
)

// Defaults.
const (
	DefaultDeepSeekBaseURL   = "https://api.deepseek.com"
	DefaultOpenAIBaseURL     = "https://api.openai.com/v1"
	DefaultStreamIdleTimeout = 300 * time.Second
	DefaultKeepAliveLimit    = 300 * time.Second
	// DefaultRequestTimeout bounds a whole call, as Claude Code's
	// API_TIMEOUT_MS does; a longer answer needs a larger
	// llm.request_timeout_ms.
	DefaultRequestTimeout = 10 * time.Minute
	DefaultMaxTokens      = 256000
	DefaultContextWindow  = 1000000
	// DefaultOutputTokenCap sizes the client-side output cap of a request
	// that names no max_tokens on a route without a default (see
	// outputByteLimit); nothing is sent for it.
	DefaultOutputTokenCap = 128000
)

// Config configures a Provider. Zero values select the defaults of the route
// named by Name.
type Config struct {
	// Name is the provider route recorded in request headers: "deepseek"
	// (default) or "openai", or any other name for an OpenAI-compatible
	// endpoint.
	Name string
	// BaseURL is the endpoint base; "/chat/completions" is appended.
	BaseURL string
	// APIKey is a literal key; it wins over APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable holding the key
	// (DEEPSEEK_API_KEY for deepseek, OPENAI_API_KEY otherwise).
	APIKeyEnv string
	// Thinking is the DeepSeek thinking mode sent when a request names no
	// effort: "", "enabled" or "disabled". Disabled locks the effort to off.
	Thinking string
	// DeepSeek enables the DeepSeek wire extensions (thinking,
	// reasoning_effort, reasoning_content passback). Implied by Name
	// "deepseek".
	DeepSeek bool
	// ReasoningEffort is the configured effort (off, low, high, max). Model
	// reports it (else high, or off when thinking is disabled) as the default
	// the loop materializes; a request naming no effort falls back to it.
	ReasoningEffort string
	// MaxTokens is the default per-request output cap reported by Model
	// (256000 for deepseek; unset otherwise).
	MaxTokens int
	// ContextWindow is the capacity of models without a catalog value
	// (1000000 for deepseek; unknown otherwise).
	ContextWindow int
	// StreamIdleTimeout bounds how long one read may stay outstanding.
	// Default 300s.
	StreamIdleTimeout time.Duration
	// KeepAliveLimit bounds how long a stream may go without an event that
	// carries data. SSE comments (keep-alives) keep the connection from
	// looking idle, but only this long. Default 300s.
	KeepAliveLimit time.Duration
	// RequestTimeout bounds a whole call, headers to [DONE]. Default 10
	// minutes (DefaultRequestTimeout).
	RequestTimeout time.Duration
	// HTTPClient sends requests; nil uses a private client.
	HTTPClient *http.Client
	// Env looks up environment variables; nil uses os.LookupEnv.
	Env func(string) (string, bool)
	// Models is the advisory catalog; unlisted model ids still pass through.
	Models []llm.ModelInfo
	// Version is reported in the user-agent as dsh/<version>.
	Version string
	// Now is the clock used to read HTTP-date Retry-After values; nil uses
	// time.Now.
	Now func() time.Time
}

// Provider streams chat completions from one configured endpoint.
type Provider struct {
	cfg      Config
	display  string
	base     string
	endpoint string
	client   *http.Client
}

var _ llm.Provider = (*Provider)(nil)

// New validates cfg and returns a Provider. A missing API key is not an error
// here: it is reported by the first Stream call.
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = NameDeepSeek
	}
	if cfg.Name == NameDeepSeek {
		cfg.DeepSeek = true
	}
	if err := cfg.fillDefaults(); err != nil {
		return nil, err
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &Provider{
		cfg:      cfg,
		display:  displayName(cfg.Name),
		base:     base,
		endpoint: base + "/chat/completions",
		client:   client,
	}, nil
}

func (cfg *Config) fillDefaults() error {
	var errs []error
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
		if cfg.Name == NameDeepSeek {
			cfg.BaseURL = DefaultDeepSeekBaseURL
		}
	}
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base url %q must be an absolute http or https url", cfg.BaseURL))
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "OPENAI_API_KEY"
		if cfg.Name == NameDeepSeek {
			cfg.APIKeyEnv = "DEEPSEEK_API_KEY"
		}
	}
	switch cfg.Thinking {
	case "", ThinkingEnabled, ThinkingDisabled:
	default:
		errs = append(errs, fmt.Errorf("thinking must be %q or %q, got %q", ThinkingEnabled, ThinkingDisabled, cfg.Thinking))
	}
	if cfg.DeepSeek {
		if cfg.ReasoningEffort != "" && !validEffort(cfg.ReasoningEffort) {
			errs = append(errs, fmt.Errorf("reasoning effort must be off, low, high or max, got %q", cfg.ReasoningEffort))
		} else if cfg.Thinking == ThinkingDisabled && cfg.ReasoningEffort != "" && cfg.ReasoningEffort != EffortOff {
			errs = append(errs, fmt.Errorf("reasoning effort %q needs thinking; it is disabled", cfg.ReasoningEffort))
		}
		if cfg.MaxTokens == 0 {
			cfg.MaxTokens = DefaultMaxTokens
		}
		if cfg.ContextWindow == 0 {
			cfg.ContextWindow = DefaultContextWindow
		}
		if cfg.Models == nil {
			cfg.Models = []llm.ModelInfo{
				{ID: "deepseek-v4-flash", Name: "DeepSeek-V4-Flash"},
				{ID: "deepseek-v4-pro", Name: "DeepSeek-V4-Pro"},
			}
		}
	} else if cfg.ReasoningEffort != "" && cfg.ReasoningEffort != EffortOff {
		errs = append(errs, fmt.Errorf("reasoning effort %q needs the deepseek wire extensions", cfg.ReasoningEffort))
	}
	if cfg.MaxTokens < 0 || cfg.ContextWindow < 0 {
		errs = append(errs, errors.New("max tokens and context window must not be negative"))
	}
	if cfg.StreamIdleTimeout < 0 || cfg.RequestTimeout < 0 || cfg.KeepAliveLimit < 0 {
		errs = append(errs, errors.New("timeouts must not be negative"))
	}
	if cfg.StreamIdleTimeout == 0 {
		cfg.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if cfg.KeepAliveLimit == 0 {
		cfg.KeepAliveLimit = DefaultKeepAliveLimit
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Env == nil {
		cfg.Env = os.LookupEnv
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s provider: %w", cfg.Name, errors.Join(errs...))
	}
	return nil
}

func validEffort(e string) bool {
	return e == EffortOff || e == EffortLow || e == EffortHigh || e == EffortMax
}

func displayName(name string) string {
	switch name {
	case NameDeepSeek:
		return "DeepSeek"
	case NameOpenAI:
		return "OpenAI"
	default:
		return name
	}
}

// Name returns the provider route.
func (p *Provider) Name() string { return p.cfg.Name }

// Models returns the advisory catalog with defaults applied.
func (p *Provider) Models() []llm.ModelInfo {
	out := make([]llm.ModelInfo, len(p.cfg.Models))
	for i, m := range p.cfg.Models {
		out[i] = p.complete(m)
	}
	return out
}

// Model resolves id against the catalog; an unlisted id gets the route's
// defaults.
func (p *Provider) Model(id string) llm.ModelInfo {
	for _, m := range p.cfg.Models {
		if m.ID == id {
			return p.complete(m)
		}
	}
	return p.complete(llm.ModelInfo{ID: id})
}

func (p *Provider) complete(m llm.ModelInfo) llm.ModelInfo {
	if m.Name == "" {
		m.Name = m.ID
	}
	if m.ContextWindow == 0 {
		m.ContextWindow = p.cfg.ContextWindow
	}
	if m.DefaultMaxTokens == 0 {
		m.DefaultMaxTokens = p.cfg.MaxTokens
	}
	if p.cfg.DeepSeek {
		if m.Efforts == nil {
			m.Efforts = []string{EffortOff, EffortLow, EffortHigh, EffortMax}
			if p.cfg.Thinking == ThinkingDisabled {
				m.Efforts = []string{EffortOff}
			}
		}
		if m.DefaultEffort == "" {
			m.DefaultEffort = p.defaultEffort()
		}
	}
	m.Efforts = slices.Clone(m.Efforts)
	return m
}

// defaultEffort is the effort Model advertises for the loop to materialize.
func (p *Provider) defaultEffort() string {
	switch {
	case p.cfg.ReasoningEffort != "":
		return p.cfg.ReasoningEffort
	case p.cfg.Thinking == ThinkingDisabled:
		return EffortOff
	default:
		return EffortHigh
	}
}
