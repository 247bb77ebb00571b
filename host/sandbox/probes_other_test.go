//go:build !linux

package sandbox

var probes = map[string]func(args []string) int{}
