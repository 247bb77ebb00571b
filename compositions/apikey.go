package compositions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Bounds of reading a key from a file or a command.
const (
	maxKeyBytes       = 64 << 10
	keyCommandTimeout = 30 * time.Second
)

// apiKey returns the literal model key the configuration gives: llm.api_key,
// else the content of llm.api_key_file, else the output of
// llm.api_key_command; "" leaves the provider to read llm.api_key_env per
// request. None of these can come from an untrusted project file.
func apiKey(ctx context.Context, c LLMConfig) (string, error) {
	switch {
	case c.APIKey != "":
		return c.APIKey, nil
	case c.APIKeyFile != "":
		return keyFromFile(c.APIKeyFile)
	case c.APIKeyCommand != "":
		return keyFromCommand(ctx, c.APIKeyCommand)
	}
	return "", nil
}

func keyFromFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("llm.api_key_file: cannot read the API key: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return "", fmt.Errorf("llm.api_key_file: cannot read the API key from %s: %w", path, err)
	}
	return checkKey("llm.api_key_file "+path, data)
}

func keyFromCommand(ctx context.Context, command string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, keyCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	var stdout, stderr limitedBuffer
	stdout.limit, stderr.limit = maxKeyBytes+1, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("it did not finish within %s", keyCommandTimeout)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		return "", fmt.Errorf("llm.api_key_command failed (%v)%s; fix the command or set the key another way", err, msg)
	}
	return checkKey("the output of llm.api_key_command", stdout.Bytes())
}

// checkKey trims data and checks it can be one key.
func checkKey(source string, data []byte) (string, error) {
	if len(data) > maxKeyBytes {
		return "", fmt.Errorf("%s is larger than %d bytes, which is not an API key", source, maxKeyBytes)
	}
	key := strings.TrimSpace(string(data))
	switch {
	case key == "":
		return "", fmt.Errorf("%s is empty; it should hold the API key", source)
	case strings.ContainsAny(key, "\r\n"):
		return "", fmt.Errorf("%s has several lines; it should hold only the API key", source)
	}
	return key, nil
}

// limitedBuffer keeps the first limit bytes written and discards the rest,
// so a runaway command cannot grow dsh's memory.
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
