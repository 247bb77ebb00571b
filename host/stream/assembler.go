package stream

import (
	"strconv"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Finish is the outcome a stream's finish chunk reported.
type Finish struct {
	Kind    string
	Failure *session.Failure
}

// Assembler folds a chunk stream into the content blocks of one assistant
// message. It is the single assembly algorithm: the agent loop logs each raw
// chunk and pushes it here, then reads Blocks, Usage and Finish once the
// stream ended (or Interrupted when it was cancelled).
//
// Blocks are keyed by chunk index and kept in first-seen order. A block-end
// carries the authoritative block and freezes its index: later deltas or a
// second block-end for it are ignored, so a misbehaving provider cannot make
// the streamed and the assembled output disagree. Delta-only streams (no
// block-start/block-end) assemble from their deltas. The zero value is ready
// to use; an Assembler is not safe for concurrent use.
type Assembler struct {
	parts  map[int]*partial
	order  []int
	usage  *session.Usage
	finish *Finish
}

type partial struct {
	blockType string
	text      strings.Builder
	id, name  string
	block     *session.ContentBlock // set by block-end
}

// Push feeds the next chunk, in stream order.
func (a *Assembler) Push(c Chunk) {
	switch c.Type {
	case ChunkBlockStart:
		p := a.ensure(c.Index, c.BlockType)
		if p.block == nil {
			if c.ID != "" {
				p.id = c.ID
			}
			if c.Name != "" {
				p.name = c.Name
			}
		}
	case ChunkTextDelta, ChunkReasoningDelta:
		bt := session.BlockText
		if c.Type == ChunkReasoningDelta {
			bt = session.BlockReasoning
		}
		if p := a.ensure(c.Index, bt); p.block == nil {
			p.text.WriteString(c.Delta)
		}
	case ChunkToolCallDelta:
		p := a.ensure(c.Index, session.BlockToolCall)
		if p.block != nil {
			return
		}
		if c.ID != "" {
			p.id = c.ID
		}
		if c.Name != "" {
			p.name = c.Name
		}
		p.text.WriteString(c.ArgumentsDelta)
	case ChunkBlockEnd:
		if c.Block == nil {
			return
		}
		if p := a.ensure(c.Index, c.Block.Type); p.block == nil {
			b := c.Block.Clone()
			p.block = &b
		}
	case ChunkUsage:
		if c.Usage != nil {
			u := *c.Usage
			a.usage = &u
		}
	case ChunkFinish:
		f := Finish{Kind: c.Kind}
		if c.Failure != nil {
			fc := *c.Failure
			f.Failure = &fc
		}
		a.finish = &f
	}
}

func (a *Assembler) ensure(index int, blockType string) *partial {
	if p, ok := a.parts[index]; ok {
		return p
	}
	if a.parts == nil {
		a.parts = map[int]*partial{}
	}
	p := &partial{blockType: blockType}
	a.parts[index] = p
	a.order = append(a.order, index)
	return p
}

// Blocks returns every assembled block in first-seen order. A max-tokens
// finish drops every tool-call block: a truncated call is unsafe to execute.
// A block of a type the assembler cannot build from deltas and that was never
// closed by block-end is left out.
func (a *Assembler) Blocks() []session.ContentBlock {
	dropCalls := a.finish != nil && a.finish.Kind == FinishMaxTokens
	out := make([]session.ContentBlock, 0, len(a.order))
	for _, index := range a.order {
		b, ok := a.assemble(index)
		if !ok || (dropCalls && b.Type == session.BlockToolCall) {
			continue
		}
		out = append(out, b)
	}
	return out
}

// Interrupted returns what a cancelled stream had produced that is worth
// keeping: text and reasoning blocks with non-whitespace content.
func (a *Assembler) Interrupted() []session.ContentBlock {
	var out []session.ContentBlock
	for _, index := range a.order {
		b, ok := a.assemble(index)
		if !ok || (b.Type != session.BlockText && b.Type != session.BlockReasoning) {
			continue
		}
		if strings.TrimSpace(b.Text) != "" {
			out = append(out, b)
		}
	}
	return out
}

func (a *Assembler) assemble(index int) (session.ContentBlock, bool) {
	p := a.parts[index]
	if p.block != nil {
		return p.block.Clone(), true
	}
	switch p.blockType {
	case session.BlockText:
		return session.TextBlock(p.text.String()), true
	case session.BlockReasoning:
		return session.ReasoningBlock(p.text.String()), true
	case session.BlockToolCall:
		id := p.id
		if id == "" {
			id = "call-" + strconv.Itoa(index)
		}
		return session.ToolCallBlock(id, p.name, p.text.String()), true
	default:
		return session.ContentBlock{}, false
	}
}

// Usage returns the latest usage chunk's counts, or nil if none arrived.
func (a *Assembler) Usage() *session.Usage {
	if a.usage == nil {
		return nil
	}
	u := *a.usage
	return &u
}

// Finish returns the reported finish; a stream that ended without a finish
// chunk reads as stop.
func (a *Assembler) Finish() Finish {
	if a.finish == nil {
		return Finish{Kind: FinishStop}
	}
	f := *a.finish
	if f.Failure != nil {
		fc := *f.Failure
		f.Failure = &fc
	}
	return f
}

// Finished reports whether a finish chunk arrived.
func (a *Assembler) Finished() bool { return a.finish != nil }
