package store

import (
	"encoding/json"
	"strconv"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/stream"
)

// cutStreamMessage is the failure of the finish that repair writes for a
// model stream the crash cut off.
const cutStreamMessage = "the session ended unexpectedly while the model was answering"

// cutStream follows an open turn's events to find a model stream that a
// crash cut off: assistant/chunk events of a turn step after which neither
// a finish chunk nor an assistant/message was logged. A compaction's
// summary call (step 0) is not conversation and is left alone.
type cutStream struct {
	turn, step int
	seqs       []int
	asm        stream.Assembler
	source     json.RawMessage // from the step's request/context
}

func (c *cutStream) observe(e session.Event) {
	switch e.Type {
	case session.TypeRequestContext:
		var rc session.RequestContext
		if json.Unmarshal(e.Data, &rc) == nil {
			c.source = session.ModelSource(rc.Provider, rc.Model)
		}
	case session.TypeAssistantMessage, session.TypeStepEnd:
		c.reset()
	case session.TypeAssistantChunk:
		var d session.AssistantChunk
		var ch stream.Chunk
		if json.Unmarshal(e.Data, &d) != nil || json.Unmarshal(d.Chunk, &ch) != nil {
			return
		}
		if ch.Type == stream.ChunkFinish || d.Step == 0 {
			c.reset()
			return
		}
		if len(c.seqs) == 0 || d.Turn != c.turn || d.Step != c.step {
			c.reset()
			c.turn, c.step = d.Turn, d.Step
		}
		c.seqs = append(c.seqs, e.Seq)
		c.asm.Push(ch)
	}
}

func (c *cutStream) reset() {
	c.seqs = nil
	c.asm = stream.Assembler{}
}

// open reports whether a stream was cut off.
func (c *cutStream) open() bool { return len(c.seqs) > 0 }

// finishChunk is the aborted finish that completes the cut-off chunk group,
// as the agent loop writes one for every stream it abandons.
func (c *cutStream) finishChunk() session.AssistantChunk {
	raw := session.MustMarshal(stream.Chunk{Type: stream.ChunkFinish, Kind: stream.FinishAborted,
		Failure: &session.Failure{Code: stream.CodeAborted, Message: cutStreamMessage}})
	return session.AssistantChunk{Turn: c.turn, Step: c.step, Chunk: raw}
}

// message is the interrupted assistant message holding what was streamed,
// false when nothing but whitespace or tool-call fragments arrived.
func (c *cutStream) message(sessionID string) (session.AssistantMessage, bool) {
	blocks := c.asm.Interrupted()
	if len(blocks) == 0 {
		return session.AssistantMessage{}, false
	}
	source := c.source
	if source == nil {
		source = session.ModelSource("", "")
	}
	msg := session.Message{
		Role:    session.RoleAssistant,
		Content: blocks,
		Source:  source,
		ID: uuid.NewSHA1(uuid.NameSpaceURL,
			[]byte("dsh:recovered-assistant-message:"+sessionID+":"+strconv.Itoa(c.seqs[0]))).String(),
	}
	return session.AssistantMessage{Turn: c.turn, Step: c.step, Message: msg, Usage: c.asm.Usage(), Interrupted: true}, true
}
