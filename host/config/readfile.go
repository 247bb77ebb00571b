package config

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/confine"
)

// maxConfigBytes bounds one config file. A project file is whatever the
// cloned repository holds, so it may be anything.
const maxConfigBytes = 1 << 20

// readConfigFile opens a config file without blocking: a FIFO or a device
// planted as .dsh/config.yaml would otherwise hang every start (open(2) of
// a FIFO waits for a writer, deaf to SIGTERM). It refuses what
// is larger than maxConfigBytes and, when regular is set, what is not a
// regular file.
func readConfigFile(path string, regular bool) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if regular && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file; replace it with a YAML file or remove it", path, confine.Kind(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes, too large for a config file; check what it holds", path, maxConfigBytes)
	}
	return data, nil
}
