//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// Detect returns the sandbox of this machine. No sandbox is implemented
// here yet (macOS would get a Seatbelt profile): commands cannot be
// sandboxed, and Support says so.
func Detect(launcher string) Sandbox { return unavailable{} }

// DetectFresh is Detect without zygotes; here the same.
func DetectFresh(launcher string) Sandbox { return unavailable{} }

type unavailable struct{}

func (unavailable) Support() Support {
	return Support{Reason: "dsh has no sandbox for this operating system yet"}
}

func (unavailable) Start(*exec.Cmd, Policy) (*Process, error) {
	return nil, errors.New("cannot run the command sandboxed: dsh has no sandbox for this operating system yet")
}

func (unavailable) Close() error { return nil }

// The zygote's arguments are never served here.
const (
	zygoteArg      = "__dsh-sandbox-zygote"
	zygoteServeArg = "__dsh-sandbox-zygote-serve"
)

func startZygoteSelf([]string) int { return launchExit }
func serveZygote([]string) int     { return launchExit }

func restrictSelf(Policy) (Report, error) {
	return Report{}, errors.New("dsh has no sandbox for this operating system yet")
}

func execve(string, []string, []string) error { return errors.New("not supported") }
