//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The socket filter closes what Landlock leaves open when the network is
// off: Landlock governs TCP connect and bind only, so a command could
// still send UDP (DNS to anywhere, QUIC), open raw or packet sockets, or
// use Multipath TCP, which Landlock does not see as TCP. The filter lets a
// command create unix sockets (local; Landlock scopes abstract ones) and
// netlink sockets (interface and route queries, which glibc's resolver
// makes, changing anything needs privileges a command does not have), and
// TCP sockets, whose connect and bind Landlock denies. Every other socket
// family or type fails with EACCES, as io_uring_setup does (io_uring can
// create sockets without the socket system call). Foreign system-call ABIs
// (x32 on amd64, 32-bit programs) could bypass the checks and are killed.
//
// The program is classic BPF over struct seccomp_data, written with
// x/sys/unix's SockFilter so no dependency is needed for twenty
// instructions.

// seccompArch is the native audit architecture and system call numbers.
type seccompArch struct {
	audit         uint32
	x32           bool // amd64: system calls with bit 30 set are x32
	socket, uring uint32
}

// nativeArch returns the filter's view of this architecture; false where
// dsh has no filter.
func nativeArch() (seccompArch, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return seccompArch{audit: unix.AUDIT_ARCH_X86_64, x32: true, socket: 41, uring: 425}, true
	case "arm64":
		return seccompArch{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, uring: 425}, true
	}
	return seccompArch{}, false
}

// Offsets in struct seccomp_data (little-endian: an argument's low 32
// bits come first).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retDeny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

// socketFilter returns the program for a.
func socketFilter(a seccompArch) []unix.SockFilter {
	load := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	// jeq jumps jt instructions ahead when A == k, else jf.
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	jge := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	and := func(k uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k}
	}

	prog := []unix.SockFilter{
		load(offArch),
		jeq(a.audit, 1, 0),
		ret(retKill),
		load(offNr),
	}
	if a.x32 {
		prog = append(prog, jge(0x40000000, 0, 1), ret(retKill))
	}
	prog = append(prog,
		jeq(a.uring, 0, 1), ret(retDeny),
		jeq(a.socket, 1, 0), ret(retAllow),
		// socket(domain, type, protocol)
		load(offArg0),
		jeq(unix.AF_UNIX, 4, 0),    // to the allow below
		jeq(unix.AF_NETLINK, 3, 0), // to the allow below
		jeq(unix.AF_INET, 3, 0),    // to the TCP check
		jeq(unix.AF_INET6, 2, 0),   // to the TCP check
		ret(retDeny),
		ret(retAllow),
		// An IPv4 or IPv6 socket: only a TCP stream.
		load(offArg1),
		and(0xf), // SOCK_TYPE_MASK: drops SOCK_NONBLOCK and SOCK_CLOEXEC
		jeq(unix.SOCK_STREAM, 1, 0),
		ret(retDeny),
		load(offArg2),
		jeq(0, 1, 0),
		jeq(unix.IPPROTO_TCP, 0, 1),
		ret(retAllow),
		ret(retDeny),
	)
	return prog
}

// socketFilterAvailable reports whether denySockets can install its filter
// here: a known architecture and a kernel with seccomp.
func socketFilterAvailable() bool {
	if _, ok := nativeArch(); !ok {
		return false
	}
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil
}

// denySockets installs the socket filter on the calling thread (locked,
// with no_new_privs set), for it and what it forks and execs. It reports
// false when this architecture or kernel has no filter (see
// socketFilterAvailable); Support has said so.
func denySockets() (bool, error) {
	a, ok := nativeArch()
	if !ok || !socketFilterAvailable() {
		return false, nil
	}
	prog := socketFilter(a)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return false, fmt.Errorf("cannot install the socket filter (seccomp): %w", err)
	}
	runtime.KeepAlive(prog)
	return true, nil
}
