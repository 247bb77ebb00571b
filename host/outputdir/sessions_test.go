package outputdir

import "testing"

func TestTrustsGiveOnceAndWithdrawOnce(t *testing.T) {
	var tr Trusts
	given, withdrawn := map[string]int{}, map[string]int{}
	add := func(id string) {
		tr.Add(id, func() func() {
			given[id]++
			return func() { withdrawn[id]++ }
		})
	}
	add("a")
	add("a")
	add("b")
	if given["a"] != 1 || given["b"] != 1 || !tr.Has("a") {
		t.Fatalf("given %v", given)
	}
	tr.Forget("a")
	tr.Forget("a")
	if withdrawn["a"] != 1 || tr.Has("a") {
		t.Fatalf("after Forget: withdrawn %v", withdrawn)
	}
	tr.Close()
	tr.Close()
	if withdrawn["b"] != 1 || tr.Has("b") {
		t.Fatalf("after Close: withdrawn %v", withdrawn)
	}
	tr.Add("c", func() func() { return nil }) // nothing to withdraw
	tr.Forget("c")
}

func TestSessionDirIsWhatPruneRecognises(t *testing.T) {
	if d := SessionDir("../../etc"); !sessionDir.MatchString(d) {
		t.Fatalf("SessionDir gave %q, which Prune would not touch", d)
	}
}
