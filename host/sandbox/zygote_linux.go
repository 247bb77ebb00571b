//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A zygote is a launcher that stays: dsh starts one per distinct policy,
// and it forks every command of that policy, so a command pays for a fork
// and an exec instead of a Go runtime's start-up.
//
// It starts as a launcher (zygoteArg): it restricts its thread under the
// policy, as a launcher does, and then execs dsh again as the zygote proper
// (zygoteServeArg), so that every thread of the long-lived process is
// inside the sandbox; a process with unrestricted threads beside the
// restricted one could be taken over by the commands it starts (through
// ptrace or /proc/pid/mem) and used to escape. The zygote also makes
// itself non-dumpable, so its commands cannot trace it, and dsh checks that
// every pid it reports is the zygote's child, so a zygote cannot steer
// dsh's signals at processes outside it.
//
// Wire: fd 3 of the zygote is a SOCK_SEQPACKET control socket. The zygote
// first sends its Report (JSON, one message). Each command is then one
// message from dsh: a byte, with SCM_RIGHTS carrying a fresh request socket
// followed by the command's descriptors. On the request socket (a stream)
// dsh writes a startRequest and reads a zygoteReply with the pid (or an
// error), checks the pid and writes true, and then reads another
// zygoteReply with the wait status once the command exited (the zygote
// reaps the command only after the check). The
// zygote exits when the control socket closes (dsh closed it or died); its
// commands are started with Pdeathsig SIGKILL and die with it.
const (
	zygoteArg      = "__dsh-sandbox-zygote"
	zygoteServeArg = "__dsh-sandbox-zygote-serve"
)

// ctlFD is the zygote's control socket.
const ctlFD = 3

const (
	// defaultReplyTimeout bounds the wait for an answer a zygote owes
	// now: the pid of a command it was asked to start, the status of one
	// that has exited. A zygote that misses it (a command stopped it) is
	// killed and replaced; it is never waited for forever.
	defaultReplyTimeout = 10 * time.Second
	// startTimeout bounds a new zygote's start, up to its report.
	startTimeout = 30 * time.Second
	// maxFiles bounds the descriptors of one command (stdio included).
	maxFiles = 64
	// maxRequest bounds one start request (argv and environment).
	maxRequest = 8 << 20
	// maxReply bounds what dsh reads of the zygote's replies.
	maxReply = 64 << 10
)

// errZygoteGone marks a failure to reach a zygote: it died, or is dying.
var errZygoteGone = errors.New("the sandbox launcher is gone")

// startRequest is what the zygote needs to start one command.
type startRequest struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// Files maps the command's descriptors 0, 1, 2, ... to the received
	// descriptors (after the request socket), -1 for a closed one.
	Files   []int `json:"files"`
	Setsid  bool  `json:"setsid,omitempty"`
	Setpgid bool  `json:"setpgid,omitempty"`
	Pgid    int   `json:"pgid,omitempty"`
}

// zygoteReply is one message from the zygote on a request socket.
type zygoteReply struct {
	Pid    int    `json:"pid,omitempty"`
	Error  string `json:"error,omitempty"`
	Exited bool   `json:"exited,omitempty"`
	Status uint32 `json:"status,omitempty"`
}

// startZygoteSelf is the zygote's first stage: restrict this thread under
// the policy in args and exec the zygote proper with the report; it
// returns only on failure, which it reports on the control socket.
func startZygoteSelf(args []string) int {
	fail := func(err error) int {
		b, _ := json.Marshal(Report{Error: err.Error(), Zygote: true})
		_, _ = unix.Write(ctlFD, b)
		return launchExit
	}
	if len(args) != 1 {
		return fail(errors.New("the zygote needs a policy"))
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fail(fmt.Errorf("cannot read the sandbox policy: %w", err))
	}
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	rep, err := restrictSelf(p)
	if err != nil {
		return fail(err)
	}
	rep.Zygote = true
	b, _ := json.Marshal(rep)
	err = execve(self, []string{self, zygoteServeArg, string(b)}, []string{})
	return fail(fmt.Errorf("cannot run dsh inside the sandbox (%s): %w", self, err))
}

// serveZygote is the zygote proper, already inside the sandbox; it
// returns only on failure.
func serveZygote(args []string) int {
	if len(args) != 1 {
		return launchExit
	}
	// Commands must not trace or read the memory of the process that
	// holds the control socket.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		b, _ := json.Marshal(Report{Error: "cannot make the zygote non-dumpable: " + err.Error()})
		_, _ = unix.Write(ctlFD, b)
		return launchExit
	}
	ctlFile := os.NewFile(ctlFD, "sandbox-control")
	conn, err := net.FileConn(ctlFile) // close-on-exec: commands never get it
	ctlFile.Close()
	if err != nil {
		return launchExit
	}
	ctl, ok := conn.(*net.UnixConn)
	if !ok {
		return launchExit
	}
	if _, err := ctl.Write([]byte(args[0])); err != nil {
		return launchExit
	}
	readRequests(ctl)
	return 0
}

// readRequests serves the control socket until it closes, then ends the
// zygote (and with it, through Pdeathsig, the commands still running).
func readRequests(ctl *net.UnixConn) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*(maxFiles+1)))
	for {
		n, oobn, _, _, err := ctl.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			os.Exit(0)
		}
		fds, err := receivedFDs(oob[:oobn])
		if err != nil || len(fds) < 1 {
			closeFDs(fds)
			continue
		}
		go serveRequest(fds[0], fds[1:])
	}
}

// receivedFDs returns the descriptors of a control message. The net
// package receives them close-on-exec, so a concurrent fork never leaks
// one into another command.
func receivedFDs(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// serveRequest starts one command and reports its pid and then its wait
// status on the request socket.
func serveRequest(reqFD int, files []int) {
	sock := os.NewFile(uintptr(reqFD), "sandbox-request")
	defer sock.Close()
	enc := json.NewEncoder(sock)
	dec := json.NewDecoder(io.LimitReader(sock, maxRequest))
	var req startRequest
	if err := dec.Decode(&req); err != nil {
		closeFDs(files)
		_ = enc.Encode(zygoteReply{Error: "bad start request: " + err.Error()})
		return
	}
	child := make([]uintptr, len(req.Files))
	for i, k := range req.Files {
		if k < 0 || k >= len(files) {
			child[i] = ^uintptr(0) // closed in the command
			continue
		}
		child[i] = uintptr(files[k])
	}
	// Pdeathsig fires when the forking thread exits; Go keeps its threads
	// until the process ends, so commands die with the zygote.
	pid, err := syscall.ForkExec(req.Path, req.Args, &syscall.ProcAttr{
		Dir: req.Dir, Env: req.Env, Files: child,
		Sys: &syscall.SysProcAttr{Setsid: req.Setsid, Setpgid: req.Setpgid, Pgid: req.Pgid, Pdeathsig: syscall.SIGKILL},
	})
	// The command has its copies; the zygote must not keep a pipe open.
	closeFDs(files)
	if err != nil {
		_ = enc.Encode(zygoteReply{Error: fmt.Sprintf("cannot run %s: %v", req.Path, err)})
		return
	}
	_ = enc.Encode(zygoteReply{Pid: pid})
	// Not reaped before dsh has checked the pid is this zygote's child (a
	// zombie still says so), or dsh closed the socket.
	var checked bool
	_ = dec.Decode(&checked)
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	_ = enc.Encode(zygoteReply{Exited: true, Status: uint32(ws)})
}

// zygote is dsh's handle on one running zygote. busy and retired are
// guarded by the owning landlockSandbox's mutex.
type zygote struct {
	policy string // the policy's JSON
	report Report
	ctl    *net.UnixConn
	cmd    *exec.Cmd
	exited chan struct{}

	// replyTimeout is defaultReplyTimeout, shorter in tests.
	replyTimeout time.Duration

	busy    int  // commands started and not yet waited for
	retired bool // no new commands; closed once idle
	lastUse uint64
}

// startZygote starts a zygote for policy (JSON) through launcher and
// waits for its report.
func startZygote(launcher, policy string, replyTimeout time.Duration) (*zygote, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot create the sandbox control socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "sandbox-control"), os.NewFile(uintptr(fds[1]), "sandbox-zygote")
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("cannot use the sandbox control socket: %w", err)
	}
	ctl := conn.(*net.UnixConn)
	cmd := exec.Command(launcher, zygoteArg, policy)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{theirs}
	// Its own session: a ^C for dsh's terminal must not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("cannot start the sandbox launcher: %w", err)
	}
	z := &zygote{policy: policy, ctl: ctl, cmd: cmd, exited: make(chan struct{}), replyTimeout: replyTimeout}
	go func() {
		defer close(z.exited)
		_ = cmd.Wait()
	}()
	buf := make([]byte, maxReport)
	_ = ctl.SetReadDeadline(time.Now().Add(startTimeout))
	n, err := ctl.Read(buf)
	_ = ctl.SetReadDeadline(time.Time{})
	if err == nil && n == 0 {
		err = io.EOF
	}
	if err == nil {
		err = json.Unmarshal(buf[:n], &z.report)
	}
	if err == nil && z.report.Error != "" {
		err = errors.New(z.report.Error)
	}
	if err != nil {
		z.close()
		return nil, fmt.Errorf("the sandbox launcher did not start: %w", err)
	}
	return z, nil
}

// dead reports whether the zygote process has exited.
func (z *zygote) dead() bool {
	select {
	case <-z.exited:
		return true
	default:
		return false
	}
}

// close ends the zygote and waits until it exited. It kills rather than
// waits for the zygote to see its control socket close: a command may
// have stopped it (SIGSTOP reaches it, as they share a Landlock domain).
func (z *zygote) close() {
	z.ctl.Close()
	_ = z.cmd.Process.Kill()
	<-z.exited
}

// start starts cmd in the zygote; done is called once, when the command
// has been waited for or failed to start.
func (z *zygote) start(cmd *exec.Cmd, p Policy, done func()) (*Process, error) {
	req, files, cleanup, err := requestFor(cmd)
	if err != nil {
		done()
		return nil, err
	}
	proc, err := z.send(req, files)
	// The command holds its own copies now (or never will).
	cleanup.closeChildEnds()
	if err != nil {
		cleanup.abort()
		done()
		return nil, err
	}
	rep := z.report
	return &Process{
		pid:    proc.pid,
		policy: p,
		wait: func() (syscall.WaitStatus, error) {
			defer done()
			ws, err := proc.wait()
			cleanup.wait()
			return ws, err
		},
		report: func() (Report, error) { return rep, nil },
	}, nil
}

// zygoteProc is a command started by a zygote, until its status arrives.
type zygoteProc struct {
	z     *zygote
	pid   int
	sock  *os.File
	dec   *json.Decoder
	pidfd *os.File // nil without pidfd support
}

func (zp *zygoteProc) closePidfd() {
	if zp.pidfd != nil {
		zp.pidfd.Close()
	}
}

// send passes the request and the command's descriptors to the zygote and
// reads the pid back.
func (z *zygote) send(req startRequest, files []*os.File) (*zygoteProc, error) {
	if len(files)+1 > maxFiles {
		return nil, fmt.Errorf("sandbox: a command may have at most %d descriptors", maxFiles-1)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot create a sandbox request socket: %w", err)
	}
	// Ours is polled, so waiting for a long command holds no thread;
	// theirs stays blocking for the zygote.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		closeFDs(fds[:])
		return nil, err
	}
	sock := os.NewFile(uintptr(fds[0]), "sandbox-request")
	rights := []int{fds[1]}
	for _, f := range files {
		// Fd puts the file in blocking mode, as exec does for a
		// command's files.
		rights = append(rights, int(f.Fd()))
	}
	_ = z.ctl.SetWriteDeadline(time.Now().Add(z.replyTimeout))
	_, _, err = z.ctl.WriteMsgUnix([]byte{'r'}, unix.UnixRights(rights...), nil)
	runtime.KeepAlive(files)
	unix.Close(fds[1])
	if err != nil {
		sock.Close()
		return nil, fmt.Errorf("%w: %v", errZygoteGone, err)
	}
	if err := json.NewEncoder(sock).Encode(req); err != nil {
		sock.Close()
		return nil, fmt.Errorf("%w: cannot send it the command: %v", errZygoteGone, err)
	}
	zp := &zygoteProc{z: z, sock: sock, dec: json.NewDecoder(io.LimitReader(sock, maxReply))}
	var r zygoteReply
	_ = sock.SetReadDeadline(time.Now().Add(z.replyTimeout))
	err = zp.dec.Decode(&r)
	_ = sock.SetReadDeadline(time.Time{})
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			_ = z.cmd.Process.Kill()
		}
		sock.Close()
		return nil, fmt.Errorf("%w: it ended before starting the command (%v)", errZygoteGone, err)
	}
	if r.Error != "" || r.Pid <= 0 {
		sock.Close()
		return nil, fmt.Errorf("sandbox: %s", r.Error)
	}
	if ppid, err := parentOf(r.Pid); err != nil || ppid != z.cmd.Process.Pid {
		// Not its child: a zygote taken over by a command would have dsh
		// signal someone else's process group.
		sock.Close()
		return nil, fmt.Errorf("%w: it reported pid %d, which is not its child", errZygoteGone, r.Pid)
	}
	// Its exit is seen without the zygote too, so a stopped zygote cannot
	// hold Wait forever; without pidfds (Linux < 5.3) only the zygote
	// tells.
	if fd, err := unix.PidfdOpen(r.Pid, unix.PIDFD_NONBLOCK); err == nil {
		zp.pidfd = os.NewFile(uintptr(fd), "sandbox-command")
	}
	if err := json.NewEncoder(sock).Encode(true); err != nil {
		sock.Close()
		zp.closePidfd()
		return nil, fmt.Errorf("%w: %v", errZygoteGone, err)
	}
	zp.pid = r.Pid
	return zp, nil
}

// parentOf returns the parent pid of pid, from /proc/pid/stat.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("bad stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, errors.New("bad stat")
	}
	return strconv.Atoi(f[1])
}

// wait reads the command's wait status: the zygote's report, which must
// come within replyTimeout of the command's exit.
func (zp *zygoteProc) wait() (syscall.WaitStatus, error) {
	type answer struct {
		status syscall.WaitStatus
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		var r zygoteReply
		if err := zp.dec.Decode(&r); err != nil || !r.Exited {
			answered <- answer{err: errors.New("the sandbox launcher ended before the command did; its exit status is lost")}
			return
		}
		answered <- answer{status: syscall.WaitStatus(r.Status)}
	}()
	exited := make(chan struct{}, 1)
	watched := make(chan struct{})
	if zp.pidfd != nil {
		go func() {
			defer close(watched)
			if waitReadable(zp.pidfd) {
				exited <- struct{}{}
			}
		}()
	} else {
		close(watched)
	}
	var a answer
	select {
	case a = <-answered:
	case <-exited:
		timer := time.NewTimer(zp.z.replyTimeout)
		select {
		case a = <-answered:
		case <-timer.C:
			_ = zp.z.cmd.Process.Kill()
			zp.sock.Close() // ends the reader
			<-answered
			a = answer{err: errors.New("the sandbox launcher did not report the command's exit status; it was stopped and will be replaced")}
		}
		timer.Stop()
	}
	zp.sock.Close()
	zp.closePidfd() // ends waitReadable if the answer came first
	<-watched
	return a.status, a.err
}

// waitReadable reports, once f (a pidfd) is readable, that its process
// exited; false when f was closed first or cannot be polled.
func waitReadable(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	readable := false
	err = rc.Read(func(fd uintptr) bool {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		readable = err == nil && n > 0
		return readable || err != nil
	})
	return err == nil && readable
}

// stdio are the parent's side of a command's descriptors that are not
// files: pipes and the goroutines copying through them, as exec.Cmd has.
type stdio struct {
	childEnds []*os.File // closed once the command has them
	parent    []*os.File // closed if the command did not start
	copies    []chan error
	// feeds are the copies into stdin, which may block reading the
	// caller's reader: waited for after the command, not on abort.
	feeds []chan error
}

func (s *stdio) closeChildEnds() {
	for _, f := range s.childEnds {
		f.Close()
	}
	s.childEnds = nil
}

func (s *stdio) abort() {
	for _, f := range s.parent {
		f.Close()
	}
	for _, c := range s.copies {
		<-c
	}
}

func (s *stdio) wait() {
	for _, c := range append(s.copies, s.feeds...) {
		<-c
	}
}

// requestFor turns cmd into a start request and the files to pass.
func requestFor(cmd *exec.Cmd) (startRequest, []*os.File, *stdio, error) {
	s := &stdio{}
	fail := func(err error) (startRequest, []*os.File, *stdio, error) {
		s.closeChildEnds()
		s.abort()
		return startRequest{}, nil, nil, err
	}
	if err := startable(cmd); err != nil {
		return fail(err)
	}
	req := startRequest{Path: cmd.Path, Args: cmd.Args, Env: cmd.Environ(), Dir: cmd.Dir}
	if a := cmd.SysProcAttr; a != nil {
		rest := *a
		req.Setsid, req.Setpgid, req.Pgid = a.Setsid, a.Setpgid, a.Pgid
		rest.Setsid, rest.Setpgid, rest.Pgid, rest.Pdeathsig = false, false, 0, 0
		if !reflect.ValueOf(rest).IsZero() {
			return fail(errors.New("sandbox: the command's process attributes go beyond a session, a process group and Pdeathsig; the sandbox cannot start it"))
		}
	}
	var files []*os.File
	add := func(f *os.File) {
		if f == nil {
			req.Files = append(req.Files, -1)
			return
		}
		req.Files = append(req.Files, len(files))
		files = append(files, f)
	}
	in, err := s.reader(cmd.Stdin)
	if err != nil {
		return fail(err)
	}
	add(in)
	out, err := s.writer(cmd.Stdout)
	if err != nil {
		return fail(err)
	}
	add(out)
	errf := out
	if !sameWriter(cmd.Stdout, cmd.Stderr) {
		if errf, err = s.writer(cmd.Stderr); err != nil {
			return fail(err)
		}
	}
	add(errf)
	for _, f := range cmd.ExtraFiles {
		add(f)
	}
	return req, files, s, nil
}

func (s *stdio) devNull(flag int) (*os.File, error) {
	f, err := os.OpenFile(os.DevNull, flag, 0)
	if err != nil {
		return nil, err
	}
	s.childEnds = append(s.childEnds, f)
	return f, nil
}

func (s *stdio) reader(r io.Reader) (*os.File, error) {
	switch r := r.(type) {
	case nil:
		return s.devNull(os.O_RDONLY)
	case *os.File:
		return r, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.childEnds = append(s.childEnds, pr)
	s.parent = append(s.parent, pw)
	c := make(chan error, 1)
	s.feeds = append(s.feeds, c)
	go func() {
		_, err := io.Copy(pw, r)
		pw.Close()
		c <- err
	}()
	return pr, nil
}

func (s *stdio) writer(w io.Writer) (*os.File, error) {
	switch w := w.(type) {
	case nil:
		return s.devNull(os.O_WRONLY)
	case *os.File:
		return w, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.childEnds = append(s.childEnds, pw)
	s.parent = append(s.parent, pr)
	c := make(chan error, 1)
	s.copies = append(s.copies, c)
	go func() {
		_, err := io.Copy(w, pr)
		pr.Close()
		c <- err
	}()
	return pw, nil
}

// sameWriter reports whether a and b are the same writer, as exec.Cmd
// shares one pipe for Stdout and Stderr then.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}
