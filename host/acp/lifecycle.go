package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// ProtocolVersion is the ACP version dsh speaks.
const ProtocolVersion = 1

// Initialize advertises what works: session load, list, resume and close;
// prompts of text, resource links and embedded text resources. There is no
// authentication (the model key comes from the configuration). It notes
// what the client offers: its file system and terminals (clientfs.go,
// clientterm.go), and Zed's display-only terminal, used only by a client
// without real terminals.
func (s *server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	caps := p.ClientCapabilities
	on, _ := caps.Meta["terminal_output"].(bool)
	s.terminalOutput.Store(on && !caps.Terminal)
	s.fsRead.Store(caps.Fs.ReadTextFile)
	s.fsWrite.Store(caps.Fs.WriteTextFile)
	s.terminals.Store(caps.Terminal)
	return sdk.InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentInfo:       &sdk.Implementation{Name: "dsh", Version: s.opts.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			PromptCapabilities: sdk.PromptCapabilities{
				EmbeddedContext: true,
			},
			McpCapabilities: s.mcpCapabilities(),
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate succeeds: dsh advertises no auth methods.
func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession creates a persisted session in the request's workspace.
func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	defer done()
	ctx = bounded(ctx)
	cwd, err := s.workspace(p.Cwd, p.AdditionalDirectories, len(p.McpServers))
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a, err := s.b.Sessions.NewSession(ctx, cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, internalError("cannot create a session: %v", err)
	}
	ss, err := s.attach(a, nil)
	if err != nil {
		return sdk.NewSessionResponse{}, errors.Join(err, s.b.Sessions.CloseSession(a))
	}
	s.connectMCP(ss, p.McpServers)
	s.announceAfterAnswer(ss)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.id), Modes: s.modeState(ss), ConfigOptions: s.configOptions(ss)}, nil
}

// LoadSession reopens a persisted session of this workspace and replays its
// conversation before answering.
func (s *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	defer done()
	ctx = bounded(ctx)
	ss, err := s.reopen(ctx, string(p.SessionId), p.Cwd, p.AdditionalDirectories, p.McpServers, true)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	s.announce(ss)
	ss.flush()
	return sdk.LoadSessionResponse{Modes: s.modeState(ss), ConfigOptions: s.configOptions(ss)}, nil
}

// ResumeSession reattaches a persisted session without replaying it.
func (s *server) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	defer done()
	ctx = bounded(ctx)
	ss, err := s.reopen(ctx, string(p.SessionId), p.Cwd, p.AdditionalDirectories, p.McpServers, false)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	s.announce(ss)
	ss.flush()
	return sdk.ResumeSessionResponse{Modes: s.modeState(ss), ConfigOptions: s.configOptions(ss)}, nil
}

// reopen checks that id is a session of cwd, resumes it (taking its log's
// lock and repairing a crashed tail) and attaches it, queueing the replay of
// its log when replay is set. A session this connection already has is
// replayed from its live log.
func (s *server) reopen(ctx context.Context, id, reqCwd string, extra []string, servers []sdk.McpServer, replay bool) (*sess, error) {
	cwd, err := s.workspace(reqCwd, extra, len(servers))
	if err != nil {
		return nil, err
	}
	if err := s.inWorkspace(ctx, id, cwd); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ss, attached := s.sessions[id]
	s.mu.Unlock()
	if attached {
		if replay {
			for _, e := range ss.live.Events(0) {
				ss.out.Push(ss.tr.replay(e)...)
			}
		}
		return ss, nil
	}
	a, err := s.b.Sessions.ResumeSession(ctx, id)
	if err != nil {
		return nil, internalError("cannot open session %s: %v", id, err)
	}
	var events []session.Event
	if replay {
		events = a.Session().Events(0)
	}
	ss, err = s.attach(a, events)
	if err != nil {
		return nil, errors.Join(err, s.b.Sessions.CloseSession(a))
	}
	s.connectMCP(ss, servers)
	return ss, nil
}

// inWorkspace refuses a session that does not exist or belongs to another
// workspace with the same message, so a probe learns nothing about other
// workspaces. "This workspace" is session.Workspace's rule, the one
// session/list's cwd filter applies, so every listed session can be
// loaded from the cwd it was listed for.
func (s *server) inWorkspace(ctx context.Context, id, cwd string) error {
	notHere := notFound("session %s was not found in this workspace", id)
	if id == "" {
		return invalidParams("sessionId is required")
	}
	ws, err := session.ResolveWorkspace(cwd)
	if err != nil {
		return invalidParams("cwd: %v", err)
	}
	results, err := s.b.Catalog.ReadTitleSnapshots(ctx, []string{id})
	if err != nil {
		return internalError("cannot read session %s: %v", id, err)
	}
	if len(results) != 1 {
		return notHere
	}
	r := results[0]
	if r.Status != sessionquery.Fulfilled || r.Value == nil {
		var qe *sessionquery.Error
		if !errors.As(r.Reason, &qe) || qe.Code != sessionquery.CodeSessionNotFound {
			s.log.Warn("acp: session not readable", "session", id, "err", r.Reason)
		}
		return notHere
	}
	if !ws.Holds(r.Value.Session.Cwd) {
		return notHere
	}
	return nil
}

// CloseSession cancels the session's work, flushes its log and forgets it.
func (s *server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	defer done()
	s.mu.Lock()
	ss, ok := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	delete(s.fresh, string(p.SessionId))
	s.mu.Unlock()
	if !ok {
		return sdk.CloseSessionResponse{}, notFound("unknown session: %s", p.SessionId)
	}
	if err := ss.close(s.b.Sessions); err != nil {
		return sdk.CloseSessionResponse{}, internalError("closing session %s: %v", ss.id, err)
	}
	return sdk.CloseSessionResponse{}, nil
}

// workspace validates a request's cwd: absolute, existing, a directory. MCP
// servers are connected after the session attached (connectMCP), or ignored
// with a warning without Options.MCP; additional directories are not
// advertised and refused.
func (s *server) workspace(cwd string, extra []string, mcp int) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", invalidParams("cwd must be an absolute path: %s", cwd)
	}
	if len(extra) > 0 {
		return "", invalidParams("additionalDirectories is not supported")
	}
	cwd = filepath.Clean(cwd)
	fi, err := os.Stat(cwd)
	switch {
	case err != nil:
		return "", invalidParams("cwd %s cannot be used: %v", cwd, unwrapPath(err))
	case !fi.IsDir():
		return "", invalidParams("cwd is not a directory: %s", cwd)
	}
	if s.b.Workspace != nil {
		if err := s.b.Workspace(cwd); err != nil {
			return "", invalidParams("%v", err)
		}
	}
	if mcp > 0 && s.b.MCP == nil {
		s.log.Warn("acp: ignoring the client's MCP servers; this front end has no MCP support", "servers", mcp)
	}
	return cwd, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, os.ErrNotExist) {
			return fmt.Errorf("no such directory")
		}
		return pe.Err
	}
	return err
}

// bounded is the context of a short request: the SDK cancels every
// request's context when the input ends, but a request received before
// that (a scripted client's last session/new or session/list) is still
// answered. Only prompts stop at the end of the input.
func bounded(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
