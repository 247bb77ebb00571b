package codingtools

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/procgroup"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Options are the non-config inputs of a Set.
type Options struct {
	// OnOutputDir is called once per session, with the absolute path, when
	// bash first uses the session's directory holding full copies of its
	// truncated output; the plugin uses it to let that session, and only
	// it, read those files back. The returned function withdraws that (when
	// the session is forgotten or the Set closed).
	OnOutputDir func(sessionID, dir string) (untrust func())
	// HiddenEnv names further variables bash commands never see, besides
	// CredentialEnv: the composition passes the configured llm.api_key_env.
	HiddenEnv []string
	// Log receives what fails in the background (removing old saved
	// output); nil discards it.
	Log *slog.Logger
	// Sandbox returns the sandbox commands run in when the permission
	// policy says so (auto mode); nil or a nil result means there is none,
	// and such commands fail without running.
	Sandbox func() *sandbox.Service
	// Hidden returns paths sandboxed commands may not read (dsh's own
	// data), besides the sandbox's configured ones.
	Hidden func() []string
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
	// temps holds the sandboxed commands' per-session $TMPDIR.
	temps   *tempStore
	sandbox func() *sandbox.Service
	hidden  func() []string
}

// New returns a Set of cfg, whose keys the loader checked (ConfigSchema)
// and whose other fields it checks.
func New(cfg Config, opts Options) (*Set, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	env, err := newEnvFilter(cfg.Bash.Env, opts.HiddenEnv)
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	set := &Set{
		cfg:     cfg,
		files:   newFileTracker(),
		outputs: newOutputStore(cfg.Bash.OutputDir, opts.OnOutputDir, cfg.Bash.SavedOutput.retention(), log),
		groups:  &procgroup.Tracker{},
		env:     env,
		temps:   newTempStore(),
		sandbox: func() *sandbox.Service { return nil },
		hidden:  func() []string { return nil },
	}
	if opts.Sandbox != nil {
		set.sandbox = opts.Sandbox
	}
	if opts.Hidden != nil {
		set.hidden = opts.Hidden
	}
	return set, nil
}

// Close kills the background processes bash commands left running. Those
// die with dsh anyway, even on SIGKILL; Close ends them with the activation.
func (s *Set) Close() error {
	s.outputs.close()
	s.temps.close()
	return s.groups.Close()
}

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

// Trust lets a session read the output bash saved for it, in this process
// or an earlier one, without asking; call it when the session is attached
// (created or resumed). Only that session's directory is trusted.
func (s *Set) Trust(sessionID string) { s.outputs.trust(sessionID) }

// Forget drops the read records of a session, e.g. when it is closed.
func (s *Set) Forget(sessionID string) {
	s.files.forget(sessionID)
	s.outputs.forget(sessionID)
	s.temps.forget(sessionID)
}

func sessionKey(call *tools.Call) string {
	if call.Session == nil {
		return ""
	}
	return call.Session.ID()
}

func alwaysConcurrent(*tools.Call) bool { return true }

// openRegular opens the existing regular file abs for mode through the
// call's file access; every later check and access of the call uses the
// File it returns.
func openRegular(ctx context.Context, errName string, call *tools.Call, abs string, mode OpenMode) (File, error) {
	f, err := filesFor(ctx).Open(ctx, call, abs, mode)
	if err != nil {
		return nil, fileFailure(errName, call, abs, err)
	}
	if err := checkRegular(errName, call, abs, f.Info()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fileFailure words an error of a file access opening abs; a not-found
// error lists similar names, looked up on disk through the call's Access.
func fileFailure(errName string, call *tools.Call, abs string, err error) error {
	fsys := call.Access.FS()
	defer fsys.Close()
	return openFailure(errName, call, fsys, abs, err)
}

// openFailure words an error of fsys opening abs.
func openFailure(errName string, call *tools.Call, fsys *confine.FS, abs string, err error) error {
	shown := display(call, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound(errName, call, fsys, abs)
	case errors.Is(err, syscall.EISDIR):
		return failf(errName, CodeIsDirectory, "%s is a directory, not a file; use glob (for example pattern \"*\" with path %q) to list its contents", shown, shown)
	case errors.Is(err, syscall.ENXIO):
		return failf(errName, CodeNotRegular, "%s is not a regular file (a FIFO or socket without a peer)", shown)
	case errors.Is(err, confine.ErrEscapes):
		return failf(errName, CodeOutsideWorkspace, "%s leads outside the workspace through a symbolic link (or ..), which this call was not allowed to follow; pass the path it points to, so the user is asked about that", shown)
	case errors.Is(err, confine.ErrHardLinked):
		return failf(errName, CodeOutsideWorkspace, "%s is a hard-linked file, so it may be a file outside the workspace, and was not approved; call again to have the user asked", shown)
	case errors.Is(err, confine.ErrReplaced):
		return failf(errName, CodeChangedOnDisk, "%s is no longer the file that was approved (it was replaced since); call again to have the user asked about the file now there", shown)
	}
	return failf(errName, CodeIO, "cannot open %s: %v", shown, unwrapPathError(err))
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
