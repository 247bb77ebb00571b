//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probes are programs the tests run inside the sandbox: this test binary
// started with the probe's name as its first argument.
var probes = map[string]func(args []string) int{
	"probe-sockets": probeSockets,
	"probe-udp":     probeUDP,
}

// socketKinds are the sockets probe-sockets tries to create, by name.
var socketKinds = []struct {
	name                  string
	domain, typ, protocol int
}{
	{"tcp4", unix.AF_INET, unix.SOCK_STREAM, 0},
	{"tcp6", unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, unix.IPPROTO_TCP},
	{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0},
	{"unixgram", unix.AF_UNIX, unix.SOCK_DGRAM, 0},
	{"netlink", unix.AF_NETLINK, unix.SOCK_RAW | unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE},
	{"udp4", unix.AF_INET, unix.SOCK_DGRAM, 0},
	{"udp6", unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_NONBLOCK, unix.IPPROTO_UDP},
	{"icmp", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP},
	{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW},
	{"packet", unix.AF_PACKET, unix.SOCK_RAW, 0},
	{"mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP},
	{"sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP},
}

// probeSockets prints "name: ok" or "name: <errno>" for each socket kind,
// and for io_uring_setup.
func probeSockets([]string) int {
	for _, k := range socketKinds {
		fd, err := unix.Socket(k.domain, k.typ, k.protocol)
		if err == nil {
			unix.Close(fd)
		}
		fmt.Printf("%s: %s\n", k.name, result(err))
	}
	var params [120]byte // struct io_uring_params
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	var err error
	if errno != 0 {
		err = errno
	} else {
		unix.Close(int(fd))
	}
	fmt.Printf("io_uring: %s\n", result(err))
	return 0
}

func result(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	default:
		return err.Error()
	}
}

// probeUDP sends its second argument to 127.0.0.1:<first argument>.
func probeUDP(args []string) int {
	port, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	if _, err := c.Write([]byte(args[1])); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
