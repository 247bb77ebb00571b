package prompt

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host"
)

// ServiceKey is the host service holding the prompt registry.
var ServiceKey = host.NewKey[*Registry]("systemPrompt")

// Scope is what one rendering is for: the calling session and the variables
// templates may reference (provider, model, cwd, date, permission_mode, ...).
// When Vars has no "cwd", Cwd provides it.
type Scope struct {
	SessionID string
	Cwd       string
	Vars      map[string]string
}

// vars returns the variables of the scope, with cwd defaulted from Cwd.
func (sc Scope) vars() map[string]string {
	if _, ok := sc.Vars["cwd"]; ok || sc.Cwd == "" {
		return sc.Vars
	}
	out := make(map[string]string, len(sc.Vars)+1)
	for k, v := range sc.Vars {
		out[k] = v
	}
	out["cwd"] = sc.Cwd
	return out
}

// Section is one named part of the system prompt or of the runtime context.
// Its text is Text, or Render's result when Render is set (set one, not
// both); either may reference {{variables}}. An empty rendering contributes
// nothing.
type Section struct {
	Name   string
	Order  float64
	Text   string
	Render func(Scope) string
}

// Rendered is one section as it was rendered, for snapshots and debugging.
type Rendered struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

type registered struct {
	Section
	seq uint64
}

// Registry holds the system prompt sections and the runtime-context parts.
// The zero value is not usable; call NewRegistry.
type Registry struct {
	mu       sync.Mutex
	seq      uint64
	sections []*registered
	contexts []*registered
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// AddSection registers a system prompt section. A duplicate name is an error.
func (r *Registry) AddSection(s Section) (remove func(), err error) {
	return r.add(&r.sections, "section", s)
}

// AddContext registers a runtime-context part (for example the permission
// mode). Contexts never enter the system prompt; see RuntimeContext. A
// duplicate name is an error.
func (r *Registry) AddContext(s Section) (remove func(), err error) {
	return r.add(&r.contexts, "context", s)
}

func (r *Registry) add(list *[]*registered, kind string, s Section) (func(), error) {
	if s.Name == "" {
		return nil, fmt.Errorf("prompt %s needs a name", kind)
	}
	if s.Text != "" && s.Render != nil {
		return nil, fmt.Errorf("prompt %s %q sets both Text and Render; set one", kind, s.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range *list {
		if e.Name == s.Name {
			return nil, fmt.Errorf("prompt %s %q is already registered", kind, s.Name)
		}
	}
	r.seq++
	e := &registered{Section: s, seq: r.seq}
	*list = append(*list, e)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			out := (*list)[:0:0]
			for _, x := range *list {
				if x != e {
					out = append(out, x)
				}
			}
			*list = out
		})
	}, nil
}

// System renders the system prompt: sections by ascending Order (ties in
// registration order), each interpolated strictly, empty ones dropped, the
// rest joined with "\n\n" and not trimmed.
func (r *Registry) System(sc Scope) (string, error) {
	parts, err := r.Sections(sc)
	if err != nil {
		return "", err
	}
	return joinTexts(parts), nil
}

// Sections renders the system prompt's non-empty sections in order.
func (r *Registry) Sections(sc Scope) ([]Rendered, error) {
	return r.render(&r.sections, "section", sc)
}

// RuntimeContext renders the runtime-context snapshot: "" with no parts when
// every context renders empty, else the fixed preamble followed by the parts
// joined with "\n\n".
func (r *Registry) RuntimeContext(sc Scope) (text string, parts []Rendered, err error) {
	parts, err = r.render(&r.contexts, "context", sc)
	if err != nil || len(parts) == 0 {
		return "", nil, err
	}
	return runtimeContextPreamble + joinTexts(parts), parts, nil
}

const runtimeContextPreamble = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n"

func (r *Registry) render(list *[]*registered, kind string, sc Scope) ([]Rendered, error) {
	r.mu.Lock()
	entries := append([]*registered(nil), *list...)
	r.mu.Unlock()
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].Order != entries[j].Order {
			return entries[i].Order < entries[j].Order
		}
		return entries[i].seq < entries[j].seq
	})
	vars := sc.vars()
	out := make([]Rendered, 0, len(entries))
	for _, e := range entries {
		tmpl, err := e.text(sc)
		if err != nil {
			return nil, fmt.Errorf("prompt %s %q: %w", kind, e.Name, err)
		}
		text, err := Interpolate(tmpl, vars)
		if err != nil {
			return nil, fmt.Errorf("prompt %s %q: %w", kind, e.Name, err)
		}
		if text != "" {
			out = append(out, Rendered{Name: e.Name, Text: text})
		}
	}
	return out, nil
}

// text returns the section's template, containing a panicking Render so one
// plugin cannot take the agent down.
func (e *registered) text(sc Scope) (s string, err error) {
	if e.Render == nil {
		return e.Text, nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("render panicked: %v", v)
		}
	}()
	return e.Render(sc), nil
}

func joinTexts(parts []Rendered) string {
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n\n")
}
