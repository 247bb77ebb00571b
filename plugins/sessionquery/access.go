package sessionquery

import (
	"context"
	"errors"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// caller is the identity of the calling agent, captured once when the
// execution starts: later appends to its log (this very call's tool/call,
// a parallel sibling's result) never change what this execution sees.
type caller struct {
	id     string
	header session.Header
	events []session.Event
	// ws is the caller's workspace, resolved from its header's cwd once;
	// meaningful only when the header has one.
	ws session.Workspace
}

// execution is one tool call: its context (the one the pipeline handed the
// body, so a timeout policy's deadline reaches every service call), the
// boundary and the caller.
type execution struct {
	ctx    context.Context
	b      *boundary
	caller caller
}

// begin resolves the caller from the call's live session only: no argument
// can name a workspace, so a call without an agent fails closed.
func (t *toolset) begin(ctx context.Context, c *tools.Call) (*execution, error) {
	if c == nil || c.Session == nil {
		return nil, missingAgent()
	}
	h, events := c.Session.Snapshot()
	cl := caller{id: h.ID, header: h, events: events}
	if h.Cwd != nil {
		ws, err := session.ResolveWorkspace(*h.Cwd)
		if err != nil {
			// Only an empty cwd fails; it names no workspace.
			cl.header.Cwd = nil
		}
		cl.ws = ws
	}
	return &execution{ctx: ctx, b: t.b, caller: cl}, nil
}

// beginTargeted is begin for the tools that address one session: it also
// resolves the target (session_id or the caller) and pre-authorizes it.
func (t *toolset) beginTargeted(ctx context.Context, c *tools.Call, a args) (*execution, string, error) {
	x, err := t.begin(ctx, c)
	if err != nil {
		return nil, "", err
	}
	target, err := x.target(a)
	if err != nil {
		return nil, "", err
	}
	if err := x.authorizeTarget(target); err != nil {
		return nil, "", err
	}
	return x, target, nil
}

// target is the session_id argument, or the caller when it is omitted.
func (x *execution) target(a args) (string, error) {
	id, ok, err := a.str("session_id")
	if err != nil {
		return "", err
	}
	if !ok {
		return x.caller.id, nil
	}
	return id, nil
}

func (x *execution) cwd() *string { return x.caller.header.Cwd }

// headerAuthorized is the workspace rule: another session is visible only
// when the caller has a workspace and the observed cwd is exactly one of
// its forms (session.Workspace.Holds: the caller's cwd as stored, cleaned,
// or with symbolic links resolved; the observed string itself gets no
// symlink, case or trailing-slash equivalence). The caller's own id must
// still carry the caller's captured cwd, both possibly absent, so a
// replaced session under the same id is not trusted.
func (x *execution) headerAuthorized(h session.Header) bool {
	own := x.cwd()
	if h.ID == x.caller.id {
		return samePtr(h.Cwd, own)
	}
	return own != nil && x.caller.ws.Holds(h.Cwd)
}

func samePtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// assertObserved re-verifies the header an observation came with before its
// payload is used: it must be the requested session and still authorized.
func (x *execution) assertObserved(target string, h session.Header) error {
	if h.ID != target || !x.headerAuthorized(h) {
		return unauthorized()
	}
	return nil
}

func (x *execution) cwdFilter() sq.SessionFilter {
	return sq.WorkspaceFilter(x.caller.ws)
}

// authorizeTarget admits the caller itself without a service call, and any
// other id only when one filter call for "this id in the caller's
// workspace" returns exactly that session. A missing id and a foreign one
// are denied identically, so the tools are no existence oracle.
func (x *execution) authorizeTarget(target string) error {
	if target == x.caller.id {
		return nil
	}
	if x.cwd() == nil {
		return unauthorized()
	}
	filters := []sq.SessionFilter{{Kind: sq.KindID, Values: []string{target}}, x.cwdFilter()}
	records, err := call(x.ctx, x.b, opTargetAuthorization, func(ctx context.Context) ([]sq.SessionRecord, error) {
		return x.b.svc.FilterSessions(ctx, filters)
	})
	if err != nil {
		return err
	}
	if len(records) != 1 || records[0].Header.ID != target || !x.headerAuthorized(records[0].Header) {
		return unauthorized()
	}
	return nil
}

// authorizeSessionIDs returns the subset of ids the caller may see, with
// one filter call at most. Records the service returns that were not
// requested, or that fail the workspace rule, are ignored.
func (x *execution) authorizeSessionIDs(ids []string) (map[string]bool, error) {
	ids = dedupe(ids)
	allowed := map[string]bool{}
	var others []string
	for _, id := range ids {
		if id == x.caller.id {
			allowed[id] = true
		} else {
			others = append(others, id)
		}
	}
	if x.cwd() == nil || len(others) == 0 {
		return allowed, nil
	}
	filters := []sq.SessionFilter{{Kind: sq.KindID, Values: others}, x.cwdFilter()}
	records, err := call(x.ctx, x.b, opSessionIDAuth, func(ctx context.Context) ([]sq.SessionRecord, error) {
		return x.b.svc.FilterSessions(ctx, filters)
	})
	if err != nil {
		return nil, err
	}
	requested := make(map[string]bool, len(others))
	for _, id := range others {
		requested[id] = true
	}
	for _, r := range records {
		if requested[r.Header.ID] && x.headerAuthorized(r.Header) {
			allowed[r.Header.ID] = true
		}
	}
	return allowed, nil
}

// titleView is how one session's title is shown.
type titleView struct {
	text            string
	unavailableCode string
}

func (v titleView) String() string {
	if v.unavailableCode != "" {
		return v.text + " (title unavailable: " + v.unavailableCode + ")"
	}
	return v.text
}

const untitled = "untitled"

// readTitles reads the titles of ids in one batch. A session whose title
// cannot be read is shown as unavailable with the sanitized code; a title
// observation that is unauthorized, or that comes with a header failing the
// workspace rule, fails the whole call, because its payload would otherwise
// be shown for a session the caller may not see.
func (x *execution) readTitles(ids []string) (map[string]titleView, error) {
	ids = dedupe(ids)
	results, err := call(x.ctx, x.b, opTitleObservation, func(ctx context.Context) ([]sq.TitleResult, error) {
		return x.b.svc.ReadTitleSnapshots(ctx, ids)
	})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]sq.TitleResult, len(results))
	for _, r := range results {
		if _, dup := byID[r.SessionID]; !dup {
			byID[r.SessionID] = r
		}
	}
	views := make(map[string]titleView, len(ids))
	for _, id := range ids {
		r, ok := byID[id]
		switch {
		case ok && r.Status == sq.Fulfilled && r.Value != nil:
			if err := x.assertObserved(id, r.Value.Session); err != nil {
				return nil, err
			}
			text := untitled
			if r.Value.Title != nil && r.Value.Title.Title != "" {
				text = r.Value.Title.Title
			}
			views[id] = titleView{text: text}
		default:
			reason := r.Reason
			if !ok || r.Status != sq.Rejected || reason == nil {
				reason = errors.New("the title batch returned no usable result for a requested session")
			}
			sanitized := x.b.sanitize(x.ctx, opTitleItem, reason)
			code := codeOf(sanitized)
			if code == CodeUnauthorized {
				return nil, sanitized
			}
			views[id] = titleView{text: untitled, unavailableCode: code}
		}
	}
	return views, nil
}

// currentStepBound is the last seq the current-session event search may
// see: everything before the caller's last step/start at execution start,
// which hides this step's request, output and the call being executed.
func (x *execution) currentStepBound() (int, error) {
	for i := len(x.caller.events) - 1; i >= 0; i-- {
		if x.caller.events[i].Type == session.TypeStepStart {
			return x.caller.events[i].Seq - 1, nil
		}
	}
	return 0, noCurrentStep()
}

// lineageLine is one descendant line: a visible session, or (Record nil)
// the marker of a pruned subtree.
type lineageLine struct {
	depth  int
	record *sq.SessionRecord
}

// visibleLineage is what session_trace may show of a lineage trace.
type visibleLineage struct {
	ancestors []sq.SessionRecord
	// boundary marks that the ancestor walk stopped at a session outside
	// the workspace or at an unresolved parent; neither id is shown.
	boundary    bool
	descendants []lineageLine
}

// pruneLineage keeps the ancestors up to the first unauthorized one and the
// descendants in preorder, replacing an unauthorized node and its whole
// subtree (authorized grandchildren included) by a marker. The walk is
// iterative, so depth is bounded only by memory.
func (x *execution) pruneLineage(tr sq.LineageTrace) visibleLineage {
	var v visibleLineage
	for _, a := range tr.Ancestors {
		if !x.headerAuthorized(a.Header) {
			v.boundary = true
			break
		}
		v.ancestors = append(v.ancestors, a)
	}
	if !v.boundary && !tr.Complete {
		v.boundary = true
	}
	type frame struct {
		node  *sq.LineageNode
		depth int
	}
	stack := make([]frame, 0, len(tr.Descendants))
	for i := len(tr.Descendants) - 1; i >= 0; i-- {
		stack = append(stack, frame{&tr.Descendants[i], 0})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !x.headerAuthorized(f.node.Session.Header) {
			v.descendants = append(v.descendants, lineageLine{depth: f.depth})
			continue
		}
		v.descendants = append(v.descendants, lineageLine{depth: f.depth, record: &f.node.Session})
		kids := f.node.Descendants
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, frame{&kids[i], f.depth + 1})
		}
	}
	return v
}

// ids returns the visible ids in title-batch order: the target, the
// ancestors nearest first, then the visible descendants in preorder.
func (v visibleLineage) ids(target string) []string {
	out := []string{target}
	for _, a := range v.ancestors {
		out = append(out, a.Header.ID)
	}
	for _, d := range v.descendants {
		if d.record != nil {
			out = append(out, d.record.Header.ID)
		}
	}
	return out
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
