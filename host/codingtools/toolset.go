package codingtools

import (
	"errors"
	"io/fs"
	"os"

	"github.com/seed-e9b4dba4/dsh/host/procgroup"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Options are the non-config inputs of a Set.
type Options struct {
	// OnOutputDir is called once, with the absolute path, when bash first
	// creates the directory holding full copies of truncated output; the
	// plugin uses it to let the model read those files back.
	OnOutputDir func(dir string)
	// HiddenEnv names further variables bash commands never see, besides
	// CredentialEnv: the composition passes the configured llm.api_key_env.
	HiddenEnv []string
}

// Set is one activation's coding tools and the state they share.
type Set struct {
	cfg     Config
	files   *fileTracker
	outputs *outputStore
	// groups holds bash commands' background processes that outlived
	// their call (they redirected their output); Close kills them.
	groups *procgroup.Tracker
	env    envFilter
}

// New validates cfg and returns a Set.
func New(cfg Config, opts Options) (*Set, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	env, err := newEnvFilter(cfg.Bash.Env, opts.HiddenEnv)
	if err != nil {
		return nil, err
	}
	return &Set{
		cfg:     cfg,
		files:   newFileTracker(),
		outputs: newOutputStore(cfg.Bash.OutputDir, opts.OnOutputDir),
		groups:  &procgroup.Tracker{},
		env:     env,
	}, nil
}

// Close kills the background processes bash commands left running. Those
// die with dsh anyway, even on SIGKILL; Close ends them with the activation.
func (s *Set) Close() error { return s.groups.Close() }

// Definitions returns the seven tools, ordered by name.
func (s *Set) Definitions() []*tools.Definition {
	return []*tools.Definition{
		s.bashTool(),
		s.editTool(),
		s.globTool(),
		s.grepTool(),
		s.readTool(),
		s.todoWriteTool(),
		s.writeTool(),
	}
}

// Forget drops the read records of a session, e.g. when it is closed.
func (s *Set) Forget(sessionID string) { s.files.forget(sessionID) }

func sessionKey(call *tools.Call) string {
	if call.Session == nil {
		return ""
	}
	return call.Session.ID()
}

func alwaysConcurrent(*tools.Call) bool { return true }

// statRegular stats abs for a tool that needs an existing regular file.
func statRegular(errName string, call *tools.Call, abs string) (os.FileInfo, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notFound(errName, call, abs)
		}
		return nil, failf(errName, CodeIO, "cannot access %s: %v", display(call, abs), unwrapPathError(err))
	}
	return fi, checkRegular(errName, call, abs, fi)
}

func checkRegular(errName string, call *tools.Call, abs string, fi os.FileInfo) error {
	if fi.IsDir() {
		return failf(errName, CodeIsDirectory, "%s is a directory, not a file; use glob (for example pattern \"*\" with path %q) to list its contents", display(call, abs), display(call, abs))
	}
	if !fi.Mode().IsRegular() {
		return failf(errName, CodeNotRegular, "%s is not a regular file (%s)", display(call, abs), fi.Mode().Type())
	}
	return nil
}

// unwrapPathError keeps only the cause of a *fs.PathError, because the
// message around it already names the path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
