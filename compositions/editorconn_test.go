package compositions

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// replayConfig is the snapshot profile whose model replays script (a
// replay override), with the extra settings set.
func replayConfig(t *testing.T, script string, set ...string) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	fixture := filepath.Join(dir, "session.jsonl")
	override := filepath.Join(dir, "override.json")
	if err := os.WriteFile(fixture, []byte(`{"type":"session","version":0,"id":"authoring","createdAt":0}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(override, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadConfig(t, "snapshot", append([]string{"llm.replay.fixture=" + fixture, "llm.replay.override=" + override,
		"plugins.spill.root=" + filepath.Join(dir, "spill")}, set...)...)
}

// editorConn is an editor's ACP connection to a runtime, over pipes.
type editorConn struct {
	*sdk.ClientSideConnection
	// ctx bounds the test's requests.
	ctx     context.Context
	toAgent *io.PipeWriter
	served  chan error
}

// connectEditor serves rt over ACP to cl (not initialized yet).
func connectEditor(t *testing.T, rt *Runtime, cl sdk.Client) *editorConn {
	t.Helper()
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	c := &editorConn{toAgent: toAgent, served: make(chan error, 1)}
	go func() {
		c.served <- ServeACP(context.Background(), rt, agentIn, agentOut, "test")
		_ = agentOut.Close()
	}()
	c.ClientSideConnection = sdk.NewClientSideConnection(cl, toAgent, fromAgent)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c.ctx = ctx
	return c
}

// end closes the editor's side and fails the test unless ServeACP then
// returned nil.
func (c *editorConn) end(t *testing.T) {
	t.Helper()
	_ = c.toAgent.Close()
	if err := <-c.served; err != nil {
		t.Fatal(err)
	}
}
