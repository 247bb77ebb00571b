package benchcorpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

const baseTime = 1_750_000_000_000 // 2025-06-15, epoch ms

// builder accumulates one session's events, tracking the current surface
// so compactions cite exactly the nodes they shadow.
type builder struct {
	r      *rand.Rand
	header session.Header
	events []session.Event
	nodes  []int
	turn   int
	now    int64
	bytes  int64
	rare   bool // plant RareID once in this session
	// mixed draws the mixed-script sentences (mixedSentence) from a stream
	// of its own, so adding them left every other byte of the corpus as it
	// was.
	mixed *rand.Rand
}

func newSession(r *rand.Rand, i int, opts Options, rare bool) *builder {
	created := baseTime + int64(i)*90_000 + int64(r.IntN(60_000))
	id := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<16), r.IntN(1<<16), r.Uint64()&(1<<48-1))
	cwd := workspaces[r.IntN(len(workspaces))]
	return &builder{
		r:      r,
		header: session.Header{Version: session.FormatVersion, ID: id, CreatedAt: created, Cwd: &cwd},
		now:    created,
		rare:   rare,
		mixed:  rand.New(rand.NewPCG(opts.Seed^mixedSalt, uint64(i))),
	}
}

// fork seeds this session with a prefix of parent ending at a turn end.
func (b *builder) fork(parent generated) {
	var ends []int
	for _, e := range parent.events {
		if e.Type == session.TypeTurnEnd {
			ends = append(ends, e.Seq)
		}
	}
	if len(ends) == 0 {
		return
	}
	end := ends[b.r.IntN(len(ends))]
	seed := session.CloneEvents(parent.events[:end+1])
	b.header.Cwd = parent.header.Cwd
	b.header.ParentSession = &parent.header.ID
	b.header.SeedLength = session.Ptr(len(seed))
	b.events = seed
	for _, e := range seed {
		b.trackSurface(e)
		if e.Type == session.TypeTurnStart {
			b.turn++
		}
		b.bytes += int64(len(e.Data)) + 60
	}
	b.now = max(b.now, seed[len(seed)-1].Time)
	b.add(session.TypeEndSeed, struct{}{})
}

func (b *builder) trackSurface(e session.Event) {
	if !session.IsSurfaceType(e.Type) {
		return
	}
	op, err := e.Op()
	if err != nil || !op.Replace {
		b.nodes = append(b.nodes, e.Seq)
		return
	}
	si, ei := indexOf(b.nodes, op.Start), indexOf(b.nodes, op.End)
	b.nodes = append(append(append([]int{}, b.nodes[:si]...), e.Seq), b.nodes[ei+1:]...)
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func (b *builder) add(typ string, data any, opts ...session.AppendOption) session.Event {
	b.now += int64(1 + b.r.IntN(400))
	e := session.Event{Type: typ, Seq: len(b.events), Time: b.now, Data: session.MustMarshal(data)}
	if session.IsSurfaceType(typ) {
		e.SurfaceOp = session.OpAppend
	}
	for _, o := range opts {
		o(&e)
	}
	b.trackSurface(e)
	b.events = append(b.events, e)
	b.bytes += int64(len(e.Data)) + 60
	return e
}

func (b *builder) turns(n int) {
	for range n {
		b.oneTurn()
	}
	b.title()
}

func (b *builder) oneTurn() {
	t := b.turn
	b.turn++
	b.add(session.TypeTurnStart, session.TurnStart{Turn: t})
	if len(b.nodes) > 12 && b.r.IntN(6) == 0 {
		b.compact()
	}
	b.add(session.TypeUserMessage, b.userMessage(b.prompt()))
	if b.r.IntN(5) == 0 {
		b.todos()
	}
	steps := 1 + b.r.IntN(3)
	for s := range steps {
		b.step(t, s, s == steps-1)
	}
	b.add(session.TypeTurnEnd, session.TurnEnd{Turn: t, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
}

func (b *builder) userMessage(text string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.UserSource, ID: b.msgID("u")}
}

func (b *builder) msgID(prefix string) string {
	return fmt.Sprintf("%s-%d-%x", prefix, len(b.events), b.r.Uint32())
}

func (b *builder) prompt() string {
	r := b.r
	parts := []string{sentence(r)}
	switch r.IntN(6) {
	case 0:
		parts = append(parts, "Look at "+filePath(r)+" and the "+identifier(r)+" function.")
	case 1:
		parts = append(parts, "The request "+requestID(r)+" returned an error again.")
	case 2:
		parts = append(parts, cjkSentence(r))
	case 3:
		parts = append(parts, "There is a failing test in "+filePath(r)+".")
	}
	b.plant(&parts)
	if b.mixed.IntN(10) == 0 {
		parts = append(parts, mixedSentence(b.mixed))
	}
	if b.rare {
		parts = append(parts, "Request "+RareID+" failed with status 503.")
		b.rare = false
	}
	return strings.Join(parts, " ")
}

// plant adds the mid-frequency tokens at their target rates.
func (b *builder) plant(parts *[]string) {
	r := b.r
	if r.IntN(400) == 0 {
		*parts = append(*parts, "Call "+MidIdentifier+" before loading.")
	}
	if r.IntN(120) == 0 {
		*parts = append(*parts, "我们 需要 "+CJKWord+" 功能。")
	}
}

func (b *builder) step(turn, step int, last bool) {
	b.add(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: step})
	if turn == 0 && step == 0 {
		b.add(session.TypeRequestHeader, session.RequestHeader{Header: session.EpochHeader{
			Config: session.CallConfig{Provider: "deepseek", Model: "deepseek-v4-flash"},
			System: paragraph(b.r, 20),
		}, Reason: session.HeaderInitial})
	}
	text := paragraph(b.r, 1+b.r.IntN(5))
	var extra []string
	b.plant(&extra)
	if len(extra) > 0 {
		text += " " + strings.Join(extra, " ")
	}
	if b.r.IntN(10) == 0 {
		text += " " + cjkSentence(b.r)
	}
	b.chunks(turn, step, text)
	calls := 0
	if !last || b.r.IntN(3) == 0 {
		calls = 1 + b.r.IntN(2)
	}
	var blocks []session.ContentBlock
	blocks = append(blocks, session.ReasoningBlock(sentence(b.r)), session.TextBlock(text))
	type call struct{ id, name, args string }
	var cs []call
	for range calls {
		c := b.toolCall()
		cs = append(cs, c)
		blocks = append(blocks, session.ToolCallBlock(c.id, c.name, c.args))
	}
	b.add(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: step, Message: session.Message{
		Role: session.RoleAssistant, Content: blocks, Source: session.ModelSource("deepseek", "deepseek-v4-flash"), ID: b.msgID("a"),
	}, Usage: &session.Usage{InputTokens: 1000 + b.r.IntN(30000), OutputTokens: 50 + b.r.IntN(2000)}})
	for _, c := range cs {
		b.add(session.TypeToolCall, session.ToolCall{Turn: turn, Step: step, CallID: c.id, Name: c.name, Arguments: c.args})
	}
	for _, c := range cs {
		out := b.toolOutput(c.name)
		b.add(session.TypeToolResult, session.ToolResult{Turn: turn, Step: step, Message: session.Message{
			Role:    session.RoleUser,
			Content: []session.ContentBlock{session.ToolResultBlock(c.id, []session.ContentBlock{session.TextBlock(out)}, false)},
			Source:  session.ToolSource(c.id), ID: b.msgID("r"),
		}})
	}
	b.add(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: step})
}

// chunks streams text as assistant/chunk events, as a provider would.
func (b *builder) chunks(turn, step int, text string) {
	words := strings.Fields(text)
	for len(words) > 0 {
		n := min(len(words), 2+b.r.IntN(6))
		piece := strings.Join(words[:n], " ") + " "
		words = words[n:]
		chunk := session.MustMarshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text-delta", piece})
		b.add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: chunk})
	}
}

func (b *builder) toolCall() struct{ id, name, args string } {
	r := b.r
	id := fmt.Sprintf("call_%x", r.Uint64())
	switch r.IntN(4) {
	case 0:
		return struct{ id, name, args string }{id, "bash", string(session.MustMarshal(map[string]string{"command": "go test ./" + identParts[r.IntN(len(identParts))] + "/..."}))}
	case 1:
		return struct{ id, name, args string }{id, "grep", string(session.MustMarshal(map[string]string{"pattern": identifier(r)}))}
	default:
		return struct{ id, name, args string }{id, "read", string(session.MustMarshal(map[string]string{"path": filePath(b.r)}))}
	}
}

func (b *builder) toolOutput(name string) string {
	r := b.r
	size := 200 + r.IntN(1800)
	if r.IntN(12) == 0 {
		size = 4000 + r.IntN(16000)
	}
	var out string
	if name == "bash" {
		out = commandOutput(r, size)
	} else {
		out = sourceCode(r, size)
	}
	if r.IntN(300) == 0 {
		out += "\n// TODO: " + MidIdentifier + " should cache its result\n"
	}
	return out
}

func (b *builder) todos() {
	n := 1 + b.r.IntN(4)
	todos := make([]session.Todo, n)
	statuses := []string{session.TodoPending, session.TodoInProgress, session.TodoCompleted}
	for i := range todos {
		todos[i] = session.Todo{Content: words(b.r, 4+b.r.IntN(6)), Status: statuses[b.r.IntN(3)]}
	}
	b.add(session.TypeTodoWrite, session.TodoWrite{Todos: todos})
}

// compact replaces the older half of the surface with a summary, citing
// every node it shadows, as /compact does.
func (b *builder) compact() {
	k := len(b.nodes) / 2
	shadowed := append([]int(nil), b.nodes[:k+1]...)
	summary := "Summary of the conversation so far: " + paragraph(b.r, 4)
	msg := session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(summary)},
		Source: session.PluginSource("compaction", "summary"), ID: b.msgID("c")}
	b.add(session.TypeUserMessage, msg, session.WithSurface(session.OpReplace(shadowed[0], shadowed[len(shadowed)-1])), session.WithSources(shadowed...))
}

func (b *builder) title() {
	var first int
	var text string
	for _, e := range b.events {
		if e.Type == session.TypeUserMessage {
			var m session.Message
			if json.Unmarshal(e.Data, &m) == nil {
				first, text = e.Seq, session.JoinText(m.Content)
				break
			}
		}
	}
	t := session.FallbackTitle(text)
	if t == "" {
		return
	}
	b.add(session.TypeSessionTitle, session.SessionTitle{Title: t, MessageSeqs: []int{first}, Source: json.RawMessage(`{"kind":"fallback"}`)})
}
