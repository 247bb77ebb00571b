package agent

import (
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// history is the agent's incremental view of its log: the surface fold,
// extended with the events appended since the last sync, and the model
// message of every surface event, decoded once. Events never change, so a
// decoded message stays valid; which of them are current is the fold's
// business. Building each request from it is therefore proportional to the
// new events, not to the whole log, while staying exactly what
// session.DeriveMessages would return.
//
// Only the goroutine running the current activity uses it.
type history struct {
	fold *session.SurfaceFold
	msgs map[int]session.Message
	// Seqs of the latest workspace-instructions and runtime-context
	// messages, or -1.
	lastInstructions int
	lastContext      int
}

func newHistory() *history {
	return &history{fold: session.NewSurfaceFold(), msgs: map[int]session.Message{}, lastInstructions: -1, lastContext: -1}
}

// sync folds in the events appended to live since the last call.
func (h *history) sync(live *session.Live) error {
	for _, e := range live.Events(h.fold.Len()) {
		if err := h.fold.Append(e); err != nil {
			return fmt.Errorf("invalid session surface: %w", err)
		}
		if !session.IsSurfaceType(e.Type) {
			continue
		}
		m, ok, err := session.EventMessage(e)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		h.msgs[e.Seq] = m
		if e.Type == session.TypeUserMessage {
			switch {
			case m.SourceKind() == session.SourceInstructions:
				h.lastInstructions = e.Seq
			case prompt.IsRuntimeContext(m):
				h.lastContext = e.Seq
			}
		}
	}
	return nil
}

// messages is the model history of the log as of the last sync.
func (h *history) messages() []session.Message {
	nodes := h.fold.Nodes()
	out := make([]session.Message, 0, len(nodes))
	for _, seq := range nodes {
		if m, ok := h.msgs[seq]; ok {
			out = append(out, m)
		}
	}
	return out
}

// shadowed reports whether a compaction replaced the surface node seq.
func (h *history) shadowed(seq int) bool {
	return h.fold.Surface(seq) == session.SurfaceShadowed
}

// lastReplacement is the seq of the latest replacing event, or -1.
func (h *history) lastReplacement() int {
	rs := h.fold.Replacements()
	if len(rs) == 0 {
		return -1
	}
	return rs[len(rs)-1].Seq
}

// surface lists the current surface nodes with their size and tool-call
// pairing.
func (h *history) surface() []node {
	seqs := h.fold.Nodes()
	out := make([]node, len(seqs))
	for i, seq := range seqs {
		e, _ := h.fold.Event(seq)
		n := node{event: e, tokens: estimateTokens(len(e.Data)) + 4}
		if m, ok := h.msgs[seq]; ok {
			n.msg = &m
			for _, b := range m.Content {
				switch {
				case e.Type == session.TypeAssistantMessage && b.Type == session.BlockToolCall:
					n.opens = append(n.opens, b.ID)
				case e.Type == session.TypeToolResult && b.Type == session.BlockToolResult:
					n.closes = b.ToolCallID
				}
			}
		}
		out[i] = n
	}
	return out
}
