package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// LauncherArg is the first argument that makes a dsh process (or a test
// binary whose TestMain calls MaybeLaunch) act as the sandbox launcher:
//
//	<launcher> LauncherArg <report fd> <policy JSON> <path> <argv...>
//
// It is not a user command; the name says so. The zygote, a launcher that
// stays for many commands, is started with zygoteArg instead.
const LauncherArg = "__dsh-sandbox-exec"

// launchExit is the launcher's exit status when it refuses to run the
// command (the shell's "cannot execute" status).
const launchExit = 126

// MaybeLaunch runs the launcher and never returns when this process was
// started as one; otherwise it returns at once. Call it first thing in
// main (and in TestMain of tests that run sandboxed commands), before any
// other start-up work, so the launcher stays cheap.
func MaybeLaunch() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case LauncherArg:
		os.Exit(launch(os.Args[2:]))
	case zygoteArg:
		os.Exit(startZygoteSelf(os.Args[2:]))
	case zygoteServeArg:
		os.Exit(serveZygote(os.Args[2:]))
	}
}

// launch parses the launcher's arguments, restricts this process and execs
// the command; it returns only on failure, with the exit status.
func launch(args []string) int {
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "dsh sandbox: the launcher needs a report descriptor, a policy and a command")
		return launchExit
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "dsh sandbox: bad report descriptor %q\n", args[0])
		return launchExit
	}
	report := os.NewFile(uintptr(fd), "sandbox-report")
	var p Policy
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		return refuse(report, fmt.Errorf("cannot read the sandbox policy: %w", err))
	}
	rep, err := restrictSelf(p)
	if err != nil {
		return refuse(report, err)
	}
	b, _ := json.Marshal(rep)
	_, werr := report.Write(b)
	report.Close()
	if werr != nil {
		// The parent would not know the command ran sandboxed.
		fmt.Fprintf(os.Stderr, "dsh sandbox: cannot report to dsh: %v\n", werr)
		return launchExit
	}
	err = execve(args[2], args[3:], os.Environ())
	fmt.Fprintf(os.Stderr, "dsh sandbox: cannot run %s: %v\n", args[2], err)
	return launchExit
}

// refuse reports err to the parent and on stderr, which the command's
// output shows.
func refuse(report *os.File, err error) int {
	b, _ := json.Marshal(Report{Error: err.Error()})
	_, _ = report.Write(b)
	report.Close()
	fmt.Fprintf(os.Stderr, "dsh sandbox: %v; the command did not run\n", err)
	return launchExit
}
