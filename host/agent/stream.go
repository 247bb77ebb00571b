package agent

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// attempt is one model call as logged: its assembled blocks and the seqs of
// its assistant/chunk events.
type attempt struct {
	asm  llm.Assembler
	seqs []int
}

// push logs c as an assistant/chunk and folds it into the assembly.
func (a *Agent) push(att *attempt, turn, step int, c llm.Chunk) error {
	raw, err := session.Marshal(c)
	if err != nil {
		return err
	}
	e, err := a.live.Append(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: raw})
	if err != nil {
		return writeError(err)
	}
	att.seqs = append(att.seqs, e.Seq)
	att.asm.Push(c)
	return nil
}

// streamChunks runs one model call and logs every chunk. The logged chunk
// group always ends with exactly one finish, so every attempt in the log is
// complete: a provider error or a cancellation becomes a finish of kind
// error or aborted, and a clean stop without any block becomes the
// EMPTY_RESPONSE error. Only a failure to write the log is returned.
func (a *Agent) streamChunks(ctx context.Context, req llm.Request, turn, step int) (*attempt, error) {
	att := &attempt{}
	finished := false
	var werr error
	err := a.opts.Provider.Stream(ctx, req, func(c llm.Chunk) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if finished {
			return nil
		}
		if c.Type == llm.ChunkFinish && c.Kind == llm.FinishStop && len(att.asm.Blocks()) == 0 {
			c = finishChunk(llm.FinishError, llm.CodeEmptyResponse, "model returned a completed response with no content")
		}
		if werr = a.push(att, turn, step, c); werr != nil {
			return werr
		}
		finished = c.Type == llm.ChunkFinish
		return nil
	})
	if werr != nil {
		return nil, werr
	}
	if !finished {
		var c llm.Chunk
		switch {
		case ctx.Err() != nil:
			c = finishChunk(llm.FinishAborted, llm.CodeAborted, "model request "+(&cancelError{causeOf(ctx)}).Error())
		case err != nil:
			f := llm.AsFailure(err)
			c = llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &f}
		default:
			c = finishChunk(llm.FinishError, llm.CodeStreamClosed, "the model stream ended without a finish")
		}
		if werr := a.push(att, turn, step, c); werr != nil {
			return nil, werr
		}
	}
	return att, nil
}

func finishChunk(kind, code, message string) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkFinish, Kind: kind, Failure: &session.Failure{Code: code, Message: message}}
}

// stream runs one attempt of a turn's model call. When the turn is cancelled
// it keeps the streamed text and reasoning as an interrupted assistant
// message and returns the cancellation.
func (a *Agent) stream(ctx context.Context, req llm.Request, turn, step int) (*attempt, error) {
	att, err := a.streamChunks(ctx, req, turn, step)
	if err != nil {
		return nil, err
	}
	if ctx.Err() == nil {
		return att, nil
	}
	if blocks := att.asm.Interrupted(); len(blocks) > 0 {
		msg := session.Message{
			Role:    session.RoleAssistant,
			Content: blocks,
			Source:  session.ModelSource(req.Config.Provider, req.Config.Model),
			ID:      a.opts.NewID(),
		}
		data := session.AssistantMessage{Turn: turn, Step: step, Message: msg, Usage: att.asm.Usage(), Interrupted: true}
		if _, err := a.live.Append(session.TypeAssistantMessage, data, session.WithSources(att.seqs...)); err != nil {
			return nil, writeError(err)
		}
	}
	return nil, ctx.Err()
}
