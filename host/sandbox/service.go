package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
)

// ServiceKey is the host service running commands sandboxed.
var ServiceKey = host.NewKey[*Service]("sandbox")

// SectionPath is the sandbox config section.
const SectionPath = "sandbox"

// ConfigSchema declares the sandbox section to host/config. The path lists
// are checked by NewService, which needs the user's home to expand them.
var ConfigSchema = config.SchemaOf[Config](SectionPath, nil)

// Config is the sandbox config section. Path lists are separated by ":"
// (like PATH); each entry is absolute or starts with "~/".
type Config struct {
	// Network lets sandboxed commands use the network (TCP, UDP, raw
	// sockets as their privileges allow).
	Network bool `mapstructure:"network"`
	// Write lists paths sandboxed commands may change besides the
	// workspace and their temporary directory, e.g. a build cache.
	Write string `mapstructure:"write"`
	// DenyRead lists paths sandboxed commands may not read besides dsh's
	// own data, e.g. ~/.ssh.
	DenyRead string `mapstructure:"deny_read"`
}

// Service is the sandbox of one composition: this machine's mechanism and
// the configured extra paths. It is safe to share; it owns the sandbox's
// long-lived launchers, which Close (the plugin's dispose) stops.
type Service struct {
	sb       Sandbox
	network  bool
	write    []string
	denyRead []string
}

// NewService checks cfg and returns the service running commands through
// sb. userHome expands "~/" in the path lists.
func NewService(sb Sandbox, cfg Config, userHome string) (*Service, error) {
	write, err := pathList("sandbox.write", cfg.Write, userHome)
	if err != nil {
		return nil, err
	}
	deny, err := pathList("sandbox.deny_read", cfg.DenyRead, userHome)
	if err != nil {
		return nil, err
	}
	return &Service{sb: sb, network: cfg.Network, write: write, denyRead: deny}, nil
}

func pathList(key, list, home string) ([]string, error) {
	var out []string
	for _, p := range filepath.SplitList(list) {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
			continue
		case p == "~" || strings.HasPrefix(p, "~/"):
			if home == "" {
				return nil, fmt.Errorf("%s: cannot expand %q without a home directory; write the absolute path", key, p)
			}
			p = filepath.Join(home, p[1:])
		case !filepath.IsAbs(p):
			return nil, fmt.Errorf("%s: %q must be an absolute path or start with ~/ (entries are separated by %q)", key, p, string(filepath.ListSeparator))
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// Support reports what sandboxed commands get on this machine under this
// configuration.
func (s *Service) Support() Support {
	sup := s.sb.Support()
	if s.network {
		sup.Missing = dropNetwork(sup.Missing)
		sup.Enforced = dropNetwork(sup.Enforced)
	}
	return sup
}

func dropNetwork(list []string) []string {
	var out []string
	for _, f := range list {
		if !strings.Contains(f, "TCP") {
			out = append(out, f)
		}
	}
	return out
}

// Network reports whether sandboxed commands may use the network.
func (s *Service) Network() bool { return s.network }

// Policy returns the policy of a command in workspace with the private
// temporary directory tmp; hidden adds paths it may not read (dsh's data).
// The workspace's .git and .dsh stay read-only.
func (s *Service) Policy(workspace, tmp string, hidden []string) Policy {
	p := Policy{Network: s.network}
	for _, w := range []string{workspace, tmp} {
		if w != "" {
			p.Write = append(p.Write, w)
		}
	}
	p.Write = append(p.Write, s.write...)
	if workspace != "" {
		p.ReadOnly = []string{filepath.Join(workspace, ".git"), filepath.Join(workspace, ".dsh")}
	}
	p.Hidden = outermost(append(append(p.Hidden, hidden...), s.denyRead...))
	return p
}

// outermost drops the paths inside another path of list, keeping order.
func outermost(list []string) []string {
	var out []string
	for _, p := range list {
		p = filepath.Clean(p)
		nested := false
		for _, q := range list {
			if q = filepath.Clean(q); q != p && isBelow(p, q) {
				nested = true
				break
			}
		}
		if !nested && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Rules describes p for a person, one line each, for dsh doctor.
func (p Policy) Rules() []string {
	out := []string{"read: everything except the hidden paths below"}
	for _, h := range p.Hidden {
		out = append(out, "hidden (no read or write): "+h)
	}
	for _, w := range p.Write {
		out = append(out, "write: "+w)
	}
	for _, r := range p.ReadOnly {
		out = append(out, "read-only inside a writable path: "+r)
	}
	if p.Network {
		out = append(out, "network: allowed")
	} else {
		out = append(out, "network: TCP connect and bind denied; no UDP, raw, packet or Multipath TCP sockets")
	}
	return out
}

// Start starts cmd under p (see Sandbox.Start).
func (s *Service) Start(cmd *exec.Cmd, p Policy) (*Process, error) { return s.sb.Start(cmd, p) }

// Close stops the sandbox's launchers (see Sandbox.Close).
func (s *Service) Close() error { return s.sb.Close() }

// Run runs cmd under p to its end, for a caller that needs no process
// handling of its own: it starts cmd, waits for it and returns the
// sandbox's report. The error is the sandbox's when the command did not
// run sandboxed, an *ExitError when it failed.
func (s *Service) Run(cmd *exec.Cmd, p Policy) (Report, error) {
	proc, err := s.Start(cmd, p)
	if err != nil {
		return Report{}, err
	}
	ws, werr := proc.Wait()
	rep, err := proc.Report()
	switch {
	case err != nil:
		return rep, err
	case werr != nil:
		return rep, werr
	case ws.Signaled() || ws.ExitStatus() != 0:
		return rep, &ExitError{Status: ws}
	}
	return rep, nil
}

// Options are the sandbox plugin's inputs from outside its config section.
type Options struct {
	// Launcher is dsh's own executable, which MaybeLaunch turns into the
	// launcher; empty means commands cannot be sandboxed.
	Launcher string
	// UserHome expands "~/" in the config's path lists.
	UserHome string
	// Sandbox replaces Detect(Launcher), for tests.
	Sandbox Sandbox
}

// Plugin provides the Service from the "sandbox" config section.
func Plugin(opts Options) host.Plugin {
	return host.Plugin{
		Name:     "sandbox",
		Provides: []string{ServiceKey.Name()},
		Section:  SectionPath,
		Apply: func(h *host.Host, sec host.Section) (host.Dispose, error) {
			var cfg Config
			if err := ConfigSchema.DecodeDefaults(&cfg); err != nil {
				return nil, err
			}
			if err := sec.Decode(&cfg); err != nil {
				return nil, err
			}
			sb := opts.Sandbox
			if sb == nil {
				sb = Detect(opts.Launcher)
			}
			svc, err := NewService(sb, cfg, opts.UserHome)
			if err != nil {
				return nil, err
			}
			unprovide, err := host.Provide(h, ServiceKey, "sandbox", svc)
			if err != nil {
				svc.Close()
				return nil, err
			}
			return func() error { unprovide(); return svc.Close() }, nil
		},
	}
}
