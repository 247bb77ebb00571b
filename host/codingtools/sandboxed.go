package codingtools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/outputdir"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// sandboxedBash runs c in the sandbox, as the permission policy decided
// (auto mode), always with the local runner: an editor's terminal cannot
// be confined by dsh. When the sandbox denies something and the command
// fails, the user is asked, through call.Sandbox.Escalate, whether it may
// run again outside the sandbox; the result says which run it shows.
func (s *Set) sandboxedBash(ctx context.Context, call *tools.Call, c Command) (any, error) {
	svc := s.sandbox()
	if svc == nil {
		return nil, failf(nameBash, CodeSandbox, "this command may only run sandboxed, but no sandbox is set up in this dsh; ask the user to approve it in another permission mode")
	}
	if sup := svc.Support(); !sup.Available {
		return nil, failf(nameBash, CodeSandbox, "this command may only run sandboxed, but commands cannot be sandboxed here (%s); ask the user to approve it in another permission mode", sup.Reason)
	}
	tmp, err := s.temps.dir(sessionKey(call))
	if err != nil {
		return nil, failf(nameBash, CodeSandbox, "cannot create the sandbox's temporary directory: %v", err)
	}
	local := s.localRunner()
	local.sandbox = svc
	local.policy = svc.Policy(call.Cwd, tmp, s.hidden())
	boxed := &sandboxedRunner{local: local}
	sc := c
	sc.Env = withEnv(c.Env, "TMPDIR", tmp)
	out, res, err := s.runBash(ctx, call, sc, boxed)
	if err != nil {
		return nil, err
	}
	if boxed.err != nil {
		return nil, failf(nameBash, CodeSandbox, "the command did not run: the sandbox could not start (%v)", boxed.err)
	}
	notes := []string{sandboxedNote(boxed.report)}
	failed := res.Cause == StopNone && (res.ExitCode != 0 || res.Signal != "")
	if !failed {
		return renderBash(out, res, c.Timeout, notes...), nil
	}
	denials := sandbox.Denials(out.buf, local.policy, call.Cwd)
	if len(denials) == 0 {
		return renderBash(out, res, c.Timeout, notes...), nil
	}
	denied := describeDenials(denials)
	notes = append(notes, "[sandbox denied: "+denied+"]")
	if call.Sandbox.Escalate == nil {
		notes = append(notes, "[nobody can be asked to run it outside the sandbox here; tell the user, who can allow it with permission mode bypass or the sandbox.write setting]")
		return renderBash(out, res, c.Timeout, notes...), nil
	}
	ok, err := call.Sandbox.Escalate(ctx, call, fmt.Sprintf("the command failed in the sandbox, which denied %s; run it again outside the sandbox, without its protections?", denied))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		notes = append(notes, fmt.Sprintf("[asking the user to run it outside the sandbox failed: %v]", err))
		return renderBash(out, res, c.Timeout, notes...), nil
	}
	if !ok {
		notes = append(notes, "[the user declined to run it outside the sandbox; do not retry it or work around the sandbox, ask the user how to proceed]")
		return renderBash(out, res, c.Timeout, notes...), nil
	}
	out2, res2, err := s.runBash(ctx, call, c, s.runnerFor(ctx))
	if err != nil {
		return nil, err
	}
	return renderBash(out2, res2, c.Timeout, "[ran outside the sandbox, approved by the user after the sandbox denied "+denied+"]"), nil
}

// sandboxedRunner is the local runner confining its command to its
// policy; it keeps what the launcher reported for the result.
type sandboxedRunner struct {
	local  runner
	report sandbox.Report
	err    error
}

func (r *sandboxedRunner) Run(ctx context.Context, c Command, out io.Writer) (RunResult, error) {
	l := r.local
	l.env = c.Env
	res, err := l.run(ctx, c.Line, c.Dir, c.Timeout, out)
	if err != nil {
		return RunResult{}, err
	}
	r.report, r.err = res.sandbox, res.sandboxErr
	return res.public(), nil
}

// sandboxedNote says what a sandboxed run was confined to.
func sandboxedNote(rep sandbox.Report) string {
	network := "network off"
	switch {
	case rep.Network:
		network = "network on"
	case !rep.NetworkEnforced:
		network = fmt.Sprintf("network not restricted: Landlock ABI %d lacks TCP rules", rep.Version)
	case !rep.SocketsEnforced:
		network = "network off for TCP only: UDP and raw sockets are not filtered on this machine"
	}
	return fmt.Sprintf("[sandboxed (Landlock ABI %d): writes only in the workspace and $TMPDIR, .git and .dsh read-only; %s]", rep.Version, network)
}

func describeDenials(ds []sandbox.Denial) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

// withEnv returns env with name set to value (replacing it).
func withEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// tempStore holds one private temporary directory per session for its
// sandboxed commands (their $TMPDIR, the one place outside the workspace
// they may write), below one base directory per Set. A session's directory
// is removed when the session is forgotten, the base when the Set closes.
type tempStore struct {
	mu   sync.Mutex
	base string
	dirs map[string]string // session id -> directory
}

func newTempStore() *tempStore { return &tempStore{dirs: map[string]string{}} }

func (t *tempStore) dir(sessionID string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.dirs[sessionID]; ok {
		return d, nil
	}
	if t.base == "" {
		base, err := os.MkdirTemp("", "dsh-tmp-")
		if err != nil {
			return "", err
		}
		t.base = base
	}
	d := filepath.Join(t.base, outputdir.SessionDir(sessionID))
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("sandbox temporary directory %s is not a plain directory; remove it", d)
	}
	t.dirs[sessionID] = d
	return d, nil
}

func (t *tempStore) forget(sessionID string) {
	t.mu.Lock()
	d, ok := t.dirs[sessionID]
	delete(t.dirs, sessionID)
	t.mu.Unlock()
	if ok {
		_ = os.RemoveAll(d)
	}
}

func (t *tempStore) close() {
	t.mu.Lock()
	base := t.base
	t.base, t.dirs = "", map[string]string{}
	t.mu.Unlock()
	if base != "" {
		_ = os.RemoveAll(base)
	}
}
