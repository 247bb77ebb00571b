package mcp

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
)

// Transports a Server may use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Server is one MCP server entry, in the shape of the common mcpServers
// JSON: a command with args and env (stdio), or a url with headers (http,
// the streamable HTTP transport, or sse).
type Server struct {
	Name string
	// Type is stdio, http or sse; empty means stdio with a command and http
	// with a url.
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// Transport returns the server's effective transport.
func (s Server) Transport() string {
	switch {
	case s.Type != "":
		return s.Type
	case s.URL != "" && s.Command == "":
		return TransportHTTP
	default:
		return TransportStdio
	}
}

// Validate reports the first problem of the entry, in words a user can act on.
func (s Server) Validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return fmt.Errorf("an MCP server needs a name")
	}
	switch s.Transport() {
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("MCP server %q: a stdio server needs a command", s.Name)
		}
		if s.URL != "" || len(s.Headers) > 0 {
			return fmt.Errorf("MCP server %q: a stdio server takes command, args and env, not url or headers", s.Name)
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" {
			return fmt.Errorf("MCP server %q: an %s server needs a url", s.Name, s.Transport())
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("MCP server %q: url %q must be an absolute http or https URL", s.Name, s.URL)
		}
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
			return fmt.Errorf("MCP server %q: an %s server takes url and headers, not command, args or env", s.Name, s.Transport())
		}
	default:
		return fmt.Errorf("MCP server %q: unknown type %q; use stdio, http or sse", s.Name, s.Type)
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("MCP server %q: environment variable name %q is not valid", s.Name, k)
		}
	}
	for k, v := range s.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("MCP server %q: header %q is not valid", s.Name, k)
		}
	}
	return nil
}

var envRef = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// Expand returns s with ${NAME} (and ${NAME:-default}) in its env values,
// header values, args and url replaced from lookup, so a pasted config can
// keep tokens in the environment. An unset variable without a default is an
// error naming it.
func (s Server) Expand(lookup func(string) (string, bool)) (Server, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var missing []string
	expand := func(v string) string {
		return envRef.ReplaceAllStringFunc(v, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if val, ok := lookup(m[1]); ok && val != "" {
				return val
			}
			if m[2] != "" {
				return m[3]
			}
			missing = append(missing, m[1])
			return ""
		})
	}
	out := s
	out.URL = expand(s.URL)
	out.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		out.Args[i] = expand(a)
	}
	out.Env = expandMap(s.Env, expand)
	out.Headers = expandMap(s.Headers, expand)
	if len(missing) > 0 {
		sort.Strings(missing)
		return s, fmt.Errorf("MCP server %q refers to unset environment variable %s; set it or give a default as ${NAME:-value}",
			s.Name, strings.Join(uniq(missing), ", "))
	}
	return out, nil
}

func expandMap(m map[string]string, expand func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}

func uniq(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
