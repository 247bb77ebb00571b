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

// toolThenDone is a replay override: the model calls tool with args (JSON
// text, already escaped for a JSON string), then answers "Done.".
func toolThenDone(tool, args string) string {
	return `[
 {"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"tool-call","id":"call_1","name":"` + tool + `"},
  {"type":"tool-call-delta","index":0,"argumentsDelta":"` + args + `"},
  {"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_1","name":"` + tool + `","arguments":"` + args + `"}},
  {"type":"usage","usage":{"inputTokens":100,"outputTokens":10}},
  {"type":"finish","kind":"tool-calls"}]},
 {"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"text"},
  {"type":"text-delta","index":0,"delta":"Done."},
  {"type":"block-end","index":0,"block":{"type":"text","text":"Done."}},
  {"type":"usage","usage":{"inputTokens":120,"outputTokens":2}},
  {"type":"finish","kind":"stop"}]}
]`
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
