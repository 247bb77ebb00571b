//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// maxVersion is the newest Landlock ABI whose rights this package uses;
// newer kernels are used at this level. ABI 7 covers files (with truncate
// and device ioctl), TCP bind and connect, and signal and abstract-socket
// scoping.
const maxVersion = 7

// landlockVersion returns the kernel's Landlock ABI, 0 when Landlock is
// absent or disabled.
func landlockVersion() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// Detect returns the sandbox of this machine, launched through the
// executable launcher (dsh itself; see MaybeLaunch). An empty launcher
// means commands cannot be sandboxed from this process.
func Detect(launcher string) Sandbox {
	return &landlockSandbox{launcher: launcher, version: min(landlockVersion(), maxVersion), sockets: socketFilterAvailable(), maxZygotes: defaultMaxZygotes, replyTimeout: defaultReplyTimeout}
}

// landlockSandbox is the Landlock sandbox and its zygotes (see
// zygote_linux.go).
// DetectFresh is Detect starting every command through a fresh launcher,
// never a zygote: slower, for measuring and diagnosing the launcher.
func DetectFresh(launcher string) Sandbox {
	s := Detect(launcher).(*landlockSandbox)
	s.maxZygotes = 0
	return s
}

type landlockSandbox struct {
	launcher string
	version  int
	// sockets is set when the socket filter can be installed (see
	// seccomp_linux.go).
	sockets bool
	// maxZygotes bounds the zygotes kept (defaultMaxZygotes); with 0 every
	// command gets a fresh launcher.
	maxZygotes int
	// replyTimeout bounds a zygote's owed answers (defaultReplyTimeout).
	replyTimeout time.Duration

	mu      sync.Mutex
	zygotes []*zygote
	closed  bool
	uses    uint64 // a clock for choosing the least recently used zygote
	// failed holds the policies whose zygote would not start.
	failed map[string]bool
	// stopping counts the zygotes being stopped in the background.
	stopping sync.WaitGroup
}

func (s *landlockSandbox) Support() Support {
	sup := Support{Name: "landlock", Version: s.version, Limits: limits()}
	switch {
	case s.launcher == "":
		sup.Reason = "dsh cannot find its own executable to launch sandboxed commands"
		return sup
	case s.version == 0:
		sup.Reason = "this kernel has no Landlock (Linux 5.13 or newer with Landlock enabled, e.g. lsm=landlock, is needed)"
		return sup
	}
	sup.Available = true
	sup.Enforced, sup.Missing = features(s.version, s.sockets)
	return sup
}

// features lists what ABI v, with the socket filter or not, enforces and
// what it lacks.
func features(v int, sockets bool) (enforced, missing []string) {
	add := func(ok bool, what string) {
		if ok {
			enforced = append(enforced, what)
		} else {
			missing = append(missing, what)
		}
	}
	add(v >= 1, "file reads and writes outside the allowed paths")
	add(v >= 2, "moving and linking files between directories inside the allowed paths (without it, such moves fail)")
	add(v >= 3, "truncating files outside the allowed paths")
	add(v >= 4, "TCP connect and bind when the network is off")
	add(v >= 5, "ioctl on device files")
	add(v >= 6, "signals to and abstract unix sockets of processes outside the sandbox")
	add(sockets, "UDP, raw, packet and Multipath TCP sockets (and io_uring) when the network is off (seccomp)")
	return enforced, missing
}

// limits are what Landlock leaves open at every ABI dsh uses.
func limits() []string {
	return []string{
		"connecting to existing unix sockets (an ssh or docker agent, which may act outside the sandbox) is not restricted",
		"a network socket handed over a unix socket by a process outside the sandbox is not restricted",
		"metadata (stat, chmod, chown, utime) is not restricted",
		"the folders on the way to a hidden path cannot be listed, and entries created in them after the command starts are not readable",
		"new entries directly in a writable root that holds .git or .dsh cannot be created (its existing entries stay writable)",
	}
}

// fsRights are the file-system rights ABI v handles.
func fsRights(v int) landlock.AccessFSSet {
	switch {
	case v >= 5:
		return 1<<16 - 1
	case v >= 3:
		return 1<<15 - 1
	case v >= 2:
		return 1<<14 - 1
	default:
		return 1<<13 - 1
	}
}

const (
	readFile = ll.AccessFSExecute | ll.AccessFSReadFile
	readDir  = readFile | ll.AccessFSReadDir
)

// restrictSelf enforces p on the calling thread, which it locks: only that
// thread, and the processes it forks or execs, are restricted (with cgo
// linked, Go cannot restrict all threads of a process).
func restrictSelf(p Policy) (Report, error) {
	v := min(landlockVersion(), maxVersion)
	if v == 0 {
		return Report{}, fmt.Errorf("this kernel has no Landlock")
	}
	handled := fsRights(v)
	cfg := landlock.Config{HandledAccessFS: handled}
	rep := Report{Version: v, Network: p.Network}
	if v >= 4 && !p.Network {
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		rep.NetworkEnforced = true
	}
	if v >= 6 {
		cfg.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	if v >= 7 {
		cfg = cfg.EnableLoggingForSubprocesses()
	}
	writeFile := landlock.AccessFSSet(readFile|ll.AccessFSWriteFile) | (handled & ll.AccessFSTruncate)
	plan := Plan(p)
	rep.Plan = planKey(plan, p.Network)
	var rules []landlock.Rule
	for _, r := range plan {
		var access landlock.AccessFSSet
		switch {
		case r.Write && r.Dir:
			access = handled
		case r.Write:
			access = writeFile
		case r.Dir:
			access = readDir
		default:
			access = readFile
		}
		rules = append(rules, landlock.PathAccess(access, r.Path).IgnoreIfMissing())
	}
	rep.Rules = len(rules)
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return Report{}, fmt.Errorf("cannot build the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return Report{}, fmt.Errorf("landlock restricted nothing")
	}
	defer unix.Close(fd)
	// Never unlocked: the restricted thread is the one that execs.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return Report{}, fmt.Errorf("cannot set no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return Report{}, fmt.Errorf("cannot enforce the Landlock ruleset: %w", err)
	}
	if !p.Network {
		ok, err := denySockets()
		if err != nil {
			return Report{}, err
		}
		rep.SocketsEnforced = ok
	}
	return rep, nil
}

func execve(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }
