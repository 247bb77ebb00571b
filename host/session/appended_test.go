package session

import (
	"slices"
	"testing"
)

// AppendedSurfaces agrees with ValidateEvents over the whole log at every
// split: ok only when the whole log validates, with the same classes for
// the appended events, and not ok only for a failing log or a replace.
func TestAppendedSurfacesAgreesWithAWholeValidation(t *testing.T) {
	end := logEv(4, TypeTurnEnd, TurnEnd{Turn: 1, Reason: TurnEndReason{Kind: EndCompleted}})
	logs := [][]Event{
		{logEv(0, TypeTurnStart, TurnStart{Turn: 1}), userEv(1, "hello"), logEv(2, TypeAssistantChunk, nil), assistantEv(3, "hi", src(2)), end},
		{userEv(0, "a"), assistantEv(1, "b"), userEv(2, "c"), assistantEv(3, "d"), pluginUserEv(4, "summary", replace(1, 3), src(3, 2, 1))},
		{userEv(0, "a"), userEv(1, "b", at(2))},
		{userEv(0, "a"), logEv(1, TypeTurnStart, TurnStart{Turn: 1}, src(0))},
		{userEv(0, "a"), userEv(1, "b", op(`"prepend"`))},
		{userEv(0, "a"), userEv(1, "b", src(5))},
	}
	oks := 0
	for n, events := range logs {
		whole, werr := ValidateEvents(events)
		for k := 0; k <= len(events); k++ {
			if _, err := ValidateEvents(events[:k]); err != nil {
				continue
			}
			surfaces, ok := AppendedSurfaces(k, events[k:])
			if ok {
				oks++
			}
			replaces := slices.ContainsFunc(events[k:], func(e Event) bool {
				op, err := e.Op()
				return err == nil && op.Replace
			})
			switch {
			case ok && werr != nil:
				t.Errorf("log %d split %d: ok, but the whole log fails: %v", n, k, werr)
			case ok && !slices.Equal(surfaces, whole.Surfaces()[k:]):
				t.Errorf("log %d split %d: surfaces %v, whole %v", n, k, surfaces, whole.Surfaces()[k:])
			case !ok && werr == nil && !replaces:
				t.Errorf("log %d split %d: not ok for a valid append without a replace", n, k)
			}
		}
	}
	if oks < 5 {
		t.Errorf("only %d splits were appendable; the logs above must mostly validate", oks)
	}
}
