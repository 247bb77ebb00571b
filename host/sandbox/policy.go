package sandbox

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Policy is what one sandboxed command may do. Paths are absolute; missing
// ones are ignored.
type Policy struct {
	// Write lists the directories (or files) the command may change: the
	// workspace, its temporary directory, configured extras.
	Write []string `json:"write"`
	// ReadOnly lists paths inside Write that stay read-only, such as the
	// workspace's .git and .dsh.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Hidden lists paths the command may not read at all: dsh's own data
	// and configured secret paths. Their parent directories cannot be
	// listed either (see Plan).
	Hidden []string `json:"hidden,omitempty"`
	// Network allows the network; without it TCP connect and bind are
	// denied, and sockets other than unix, netlink and TCP ones cannot be
	// created, where the kernel can enforce that.
	Network bool `json:"network"`
}

// Support says what the sandbox of this machine enforces.
type Support struct {
	// Available is set when commands can run sandboxed.
	Available bool
	// Name is the mechanism, e.g. "landlock".
	Name string
	// Version is the mechanism's version (the Landlock ABI), 0 when none.
	Version int
	// Reason says why the sandbox is unavailable, when it is.
	Reason string
	// Enforced lists the protections in force, one phrase each.
	Enforced []string
	// Missing lists the protections the policy asks for that this machine
	// cannot enforce.
	Missing []string
	// Limits lists what the sandbox never covers, whatever the machine.
	Limits []string
}

// Summary is a one-line description for status output.
func (s Support) Summary() string {
	if !s.Available {
		return "no sandbox: " + s.Reason
	}
	out := s.Name
	if s.Version > 0 {
		out += " ABI " + strconv.Itoa(s.Version)
	}
	if len(s.Missing) > 0 {
		out += " (not enforced: " + strings.Join(s.Missing, "; ") + ")"
	}
	return out
}

// Report is what the sandbox enforced for one command.
type Report struct {
	// Version is the Landlock ABI the ruleset was built for.
	Version int `json:"version"`
	// Rules is the number of path rules in the ruleset.
	Rules int `json:"rules"`
	// Network records whether the network was left unrestricted.
	Network bool `json:"network"`
	// NetworkEnforced is set when TCP connect and bind are denied.
	NetworkEnforced bool `json:"networkEnforced"`
	// SocketsEnforced is set when creating sockets other than unix,
	// netlink and TCP ones (UDP, raw, packet, Multipath TCP) is denied.
	SocketsEnforced bool `json:"socketsEnforced"`
	// Plan identifies the path rules (a hash of Plan's result), so a
	// zygote is reused only while the rules it enforces are still the
	// ones a fresh launcher would build.
	Plan string `json:"plan,omitempty"`
	// Zygote is set when the command was started by a long-lived
	// sandboxed launcher (see Sandbox.Start) rather than a fresh one.
	Zygote bool `json:"zygote,omitempty"`
	// Error is set when the launcher refused to run the command.
	Error string `json:"error,omitempty"`
}

// Sandbox runs commands sandboxed. Implementations: Landlock on Linux.
type Sandbox interface {
	// Support reports what this machine enforces.
	Support() Support
	// Start starts cmd, which has not been started, under p; the caller
	// waits for it with Process.Wait, never cmd.Wait. cmd's context, if
	// any, is not watched: stop the command by signalling its process
	// (group).
	Start(cmd *exec.Cmd, p Policy) (*Process, error)
	// Close stops the launchers the sandbox keeps between commands;
	// commands they still run are killed. Start fails afterwards.
	Close() error
}

// clean returns the absolute paths of list, deduplicated and sorted.
func clean(list []string) []string {
	var out []string
	for _, p := range list {
		if p == "" || p[0] != '/' {
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
