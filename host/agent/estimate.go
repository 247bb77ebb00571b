package agent

import (
	"math"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// node is one current surface node with what compaction needs to know about
// it: its estimated size, the model message it yields (nil for an empty
// assistant message) and the tool calls it opens or closes.
type node struct {
	event  session.Event
	tokens int
	msg    *session.Message
	opens  []string
	closes string
}

// estimateTokens is the cheap size estimate of the loop: about four bytes of
// JSON per token. It errs on the large side for prose and on the small side
// for CJK text; the usage reported by the provider corrects it when known.
func estimateTokens(n int) int { return (n + 3) / 4 }

func messageTokens(m session.Message) int {
	raw, err := session.Marshal(m)
	if err != nil {
		return 0
	}
	return estimateTokens(len(raw)) + 4
}

// latestUsage returns the index of the newest assistant message on the
// surface and its reported usage, when that message came after the last
// compaction (older usage describes history that no longer exists).
func latestUsage(nodes []node, lastReplace int) (int, *session.Usage) {
	for i := len(nodes) - 1; i >= 0; i-- {
		e := nodes[i].event
		if e.Type != session.TypeAssistantMessage {
			continue
		}
		if e.Seq < lastReplace {
			return -1, nil
		}
		var d struct {
			Usage *session.Usage `json:"usage"`
		}
		if e.DecodeData(&d) != nil || d.Usage == nil {
			return -1, nil
		}
		return i, d.Usage
	}
	return -1, nil
}

// pressure estimates the tokens of the next request: system prompt, tool
// schemas, the current surface and the messages about to enter. When the
// newest assistant message reported usage, that exact count plus the
// estimate of what followed it is used if it is larger.
func pressure(plan *stepPlan, nodes []node, lastReplace int, pending []session.Message) int {
	fixed := estimateTokens(len(plan.system))
	for _, t := range plan.toolsRaw {
		fixed += estimateTokens(len(t))
	}
	tail := 0
	for _, m := range pending {
		tail += messageTokens(m)
	}
	byBytes := fixed + tail
	for _, n := range nodes {
		byBytes += n.tokens
	}
	i, u := latestUsage(nodes, lastReplace)
	if u == nil {
		return byBytes
	}
	byUsage := u.InputTokens + u.CacheReadTokens + u.OutputTokens + tail
	for _, n := range nodes[i+1:] {
		byUsage += n.tokens
	}
	return max(byBytes, byUsage)
}

// region is the head of the surface a compaction summarizes.
type region struct {
	nodes  []node
	tokens int
}

func (r *region) seqs() []int {
	out := make([]int, len(r.nodes))
	for i, n := range r.nodes {
		out[i] = n.event.Seq
	}
	return out
}

// selectRegion picks the surface nodes to summarize: everything before the
// most recent retainRatio of the estimated tokens, moved earlier until no
// tool call is separated from its result. It returns nil when fewer than two
// nodes would be summarized, which would not shrink anything.
func selectRegion(nodes []node, retainRatio float64) *region {
	total := 0
	for _, n := range nodes {
		total += n.tokens
	}
	retain := int(math.Ceil(retainRatio * float64(total)))
	keep, acc := len(nodes), 0
	for i := len(nodes) - 1; i >= 0; i-- {
		acc += nodes[i].tokens
		keep = i
		if acc >= retain {
			break
		}
	}
	balanced := balancedCuts(nodes)
	for keep > 0 && !balanced[keep] {
		keep--
	}
	if keep < 2 {
		return nil
	}
	r := &region{nodes: nodes[:keep]}
	for _, n := range r.nodes {
		r.tokens += n.tokens
	}
	return r
}

// balancedCuts[i] reports whether no tool call opened before node i is
// still waiting for its result at node i.
func balancedCuts(nodes []node) []bool {
	out := make([]bool, len(nodes)+1)
	open := map[string]bool{}
	for i, n := range nodes {
		out[i] = len(open) == 0
		for _, id := range n.opens {
			open[id] = true
		}
		if n.closes != "" {
			delete(open, n.closes)
		}
	}
	out[len(nodes)] = len(open) == 0
	return out
}
