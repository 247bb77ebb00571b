package main

import (
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Every time in dsh's JSON output is RFC 3339 in UTC with milliseconds
// (isoTime), whichever command prints it; the stored form (Unix ms) stays
// in the logs and in sessions show --events --json, which prints the
// stored events themselves. These types are the query service's records
// with their times converted.

// jsonHeader is a session header with its creation time as text.
type jsonHeader struct {
	session.Header
	CreatedAt string `json:"createdAt"`
}

func headerJSON(h session.Header) jsonHeader {
	return jsonHeader{Header: h, CreatedAt: isoTime(h.CreatedAt)}
}

// jsonRecord is a sessionquery.SessionRecord.
type jsonRecord struct {
	Header    jsonHeader `json:"header"`
	Live      bool       `json:"live"`
	Persisted bool       `json:"persisted"`
}

func recordJSON(r sessionquery.SessionRecord) jsonRecord {
	return jsonRecord{Header: headerJSON(r.Header), Live: r.Live, Persisted: r.Persisted}
}

// jsonHit is a sessionquery.EventHit.
type jsonHit struct {
	sessionquery.EventHit
	Time string `json:"time"`
}

func hitJSON(h sessionquery.EventHit) jsonHit { return jsonHit{EventHit: h, Time: isoTime(h.Time)} }

// jsonNode and jsonTrace are a sessionquery.LineageTrace.
type jsonNode struct {
	Session     jsonRecord `json:"session"`
	Descendants []jsonNode `json:"descendants"`
}

type jsonTrace struct {
	Target             jsonRecord   `json:"target"`
	Ancestors          []jsonRecord `json:"ancestors"`
	Descendants        []jsonNode   `json:"descendants"`
	Complete           bool         `json:"complete"`
	Root               *jsonRecord  `json:"root,omitempty"`
	UnresolvedParentID *string      `json:"unresolvedParentId,omitempty"`
}

func traceJSON(tr sessionquery.LineageTrace) jsonTrace {
	out := jsonTrace{Target: recordJSON(tr.Target), Ancestors: []jsonRecord{}, Descendants: nodesJSON(tr.Descendants),
		Complete: tr.Complete, UnresolvedParentID: tr.UnresolvedParentID}
	for _, a := range tr.Ancestors {
		out.Ancestors = append(out.Ancestors, recordJSON(a))
	}
	if tr.Root != nil {
		r := recordJSON(*tr.Root)
		out.Root = &r
	}
	return out
}

func nodesJSON(nodes []sessionquery.LineageNode) []jsonNode {
	out := []jsonNode{}
	for _, n := range nodes {
		out = append(out, jsonNode{Session: recordJSON(n.Session), Descendants: nodesJSON(n.Descendants)})
	}
	return out
}
