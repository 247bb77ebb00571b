package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// identifierParts are parts the corpus generator builds identifiers from
// (benchcorpus), so that every part is a common term of the corpus.
var identifierParts = strings.Fields(`load save read write build index search query session event token config
	manifest workspace handler request cache store writer reader stream chunk tool result status`)

// freshIdentifiers returns n camel-case identifiers of two common parts,
// none searched by the other rows. The index records a searched
// identifier's parts phrase (how many documents hold it) and keeps that
// count through later writes, so a repeated search reads it; these are
// the searches that count it. A rebuild drops the records, and the
// rebuild row runs after this one.
func freshIdentifiers(n int) []string {
	out := make([]string, n)
	for i := range out {
		a := identifierParts[(3*i)%len(identifierParts)]
		b := identifierParts[(3*i+7)%len(identifierParts)]
		out[i] = a + strings.ToUpper(b[:1]) + b[1:]
	}
	return out
}

// measureFirstIdentifiers times the first search of runs+1 identifiers
// (the first run warms the page cache and is not counted).
func measureFirstIdentifiers(runs int, dsh func(...string) (measured, error)) (wholeSearch, error) {
	res := wholeSearch{query: query{Name: "identifier, first search", Text: "a new identifier each run"}}
	var walls, cpus []time.Duration
	for i, id := range freshIdentifiers(runs + 1) {
		m, err := dsh("sessions", "search", "--all-workspaces", "--json", id)
		if err != nil {
			return res, err
		}
		var hits []json.RawMessage
		if err := json.Unmarshal(m.stdout, &hits); err != nil {
			return res, fmt.Errorf("dsh sessions search %q printed %q", id, m.stdout)
		}
		res.Hits = len(hits)
		if i > 0 {
			walls, cpus = append(walls, m.wall), append(cpus, m.cpu)
		}
	}
	res.DSH, res.CPU = percentiles(walls), percentiles(cpus)
	return res, nil
}
