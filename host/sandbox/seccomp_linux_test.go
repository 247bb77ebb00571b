//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter runs a seccomp program on one system call, as the kernel does:
// classic BPF over struct seccomp_data (little-endian).
func runFilter(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNr:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[offArg0+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			taken := acc == in.K
			if in.Code&0xf0 == unix.BPF_JGE {
				taken = acc >= in.K
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program fell off its end")
	return 0
}

func TestSocketFilterProgram(t *testing.T) {
	for _, a := range []seccompArch{
		{audit: unix.AUDIT_ARCH_X86_64, x32: true, socket: 41, uring: 425},
		{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, uring: 425},
	} {
		prog := socketFilter(a)
		sock := func(domain, typ, proto int) uint32 {
			return runFilter(t, prog, a.audit, a.socket, uint64(domain), uint64(typ), uint64(proto))
		}
		cases := []struct {
			name string
			got  uint32
			want uint32
		}{
			{"tcp4", sock(unix.AF_INET, unix.SOCK_STREAM, 0), retAllow},
			{"tcp6 nonblocking cloexec", sock(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP), retAllow},
			{"unix", sock(unix.AF_UNIX, unix.SOCK_DGRAM, 0), retAllow},
			{"netlink", sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE), retAllow},
			{"udp4", sock(unix.AF_INET, unix.SOCK_DGRAM, 0), retDeny},
			{"udp6", sock(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP), retDeny},
			{"raw", sock(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW), retDeny},
			{"packet", sock(unix.AF_PACKET, unix.SOCK_RAW, 0), retDeny},
			{"mptcp", sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), retDeny},
			{"sctp", sock(unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_SCTP), retDeny},
			{"vsock", sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0), retDeny},
			// The kernel reads int arguments from the low 32 bits only.
			{"udp4 with high bits set", sock(unix.AF_INET|1<<32, unix.SOCK_DGRAM|1<<40, 0), retDeny},
			{"io_uring_setup", runFilter(t, prog, a.audit, a.uring, 1, 0), retDeny},
			{"read", runFilter(t, prog, a.audit, 0, 0, 0, 0), retAllow},
			{"foreign architecture", runFilter(t, prog, unix.AUDIT_ARCH_I386, 1), retKill},
		}
		if a.x32 {
			cases = append(cases, struct {
				name      string
				got, want uint32
			}{"x32 socket", runFilter(t, prog, a.audit, 0x40000000|a.socket, unix.AF_INET, unix.SOCK_DGRAM, 0), retKill})
		}
		for _, c := range cases {
			if c.got != c.want {
				t.Errorf("arch %#x, %s: filter returns %#x, want %#x", a.audit, c.name, c.got, c.want)
			}
		}
	}
}

// probe runs this test binary as the named probe in the sandbox.
func (b *box) probe(t *testing.T, p Policy, args ...string) (string, int, Report) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, code, rep, err := b.runCmd(t, p, exec.Command(exe, args...))
	if err != nil {
		t.Fatalf("sandbox: %v (output %q)", err, out)
	}
	return out, code, rep
}

func TestSandboxSocketsWhenNetworkIsOff(t *testing.T) {
	eachLauncher(t, func(t *testing.T, b *box) {
		if !requireSandbox(t, b) {
			return
		}
		out, code, rep := b.probe(t, b.policy, "probe-sockets")
		if !socketFilterAvailable() {
			// No filter here: never claimed, and said.
			missing := strings.Join(b.sb.Support().Missing, "; ")
			if rep.SocketsEnforced || !strings.Contains(missing, "UDP") {
				t.Fatalf("no socket filter, yet report %+v and missing %q", rep, missing)
			}
			return
		}
		if code != 0 || !rep.SocketsEnforced {
			t.Fatalf("exit %d, report %+v, output:\n%s", code, rep, out)
		}
		want := map[string]string{
			"tcp4": "ok", "tcp6": "ok", "unix": "ok", "unixgram": "ok", "netlink": "ok",
			"udp4": "EACCES", "udp6": "EACCES", "icmp": "EACCES", "raw": "EACCES",
			"packet": "EACCES", "mptcp": "EACCES", "sctp": "EACCES", "io_uring": "EACCES",
		}
		for name, w := range want {
			if !strings.Contains(out, name+": "+w+"\n") {
				t.Errorf("%s: want %s; probe output:\n%s", name, w, out)
			}
		}

		on := b.policy
		on.Network = true
		out, code, rep = b.probe(t, on, "probe-sockets")
		if code != 0 || rep.SocketsEnforced {
			t.Fatalf("network on: exit %d, report %+v, output:\n%s", code, rep, out)
		}
		for _, name := range []string{"udp4", "udp6", "mptcp", "io_uring"} {
			if strings.Contains(out, name+": EACCES") {
				t.Errorf("network on, %s is still denied:\n%s", name, out)
			}
		}
	})
}

func TestSandboxUDP(t *testing.T) {
	eachLauncher(t, func(t *testing.T, b *box) {
		if !requireSandbox(t, b) {
			return
		}
		ln, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := fmt.Sprint(ln.LocalAddr().(*net.UDPAddr).Port)

		out, code, _ := b.probe(t, b.policy, "probe-udp", port, "sent with the network off")
		if code == 0 || !strings.Contains(out, "permission denied") {
			t.Fatalf("network off: exit %d, output %q; want the socket denied", code, out)
		}
		if ds := Denials([]byte(out), b.policy, b.ws); len(ds) == 0 || ds[0].Kind != "network" {
			t.Fatalf("denials = %+v, want network; output %q", ds, out)
		}

		on := b.policy
		on.Network = true
		if out, code, _ := b.probe(t, on, "probe-udp", port, "sent with the network on"); code != 0 {
			t.Fatalf("network on: exit %d, output %q", code, out)
		}
		// Loopback delivers before sendto returns: the first datagram the
		// listener holds is the one sent with the network on.
		buf := make([]byte, 100)
		n, _, err := ln.ReadFromUDP(buf)
		if err != nil || string(buf[:n]) != "sent with the network on" {
			t.Fatalf("listener got %q, %v", buf[:n], err)
		}
	})
}
