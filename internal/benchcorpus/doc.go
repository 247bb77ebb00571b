// Package benchcorpus generates deterministic session corpora for the
// search benchmarks: N sessions written through host/store in the real
// JSONL format, with a realistic per-turn mix of events (prompts, request
// headers, streamed chunks, assistant messages, tool calls whose results
// carry source code and command output up to 20 KB, todo updates, titles),
// some forks and compactions (a user/message with a surfaceOp replace), and
// text made of English words, code identifiers, paths, hyphenated request
// ids and some CJK.
//
// The same seed and options always produce byte-identical logs. A few
// tokens are planted so a benchmark knows their frequency in advance
// (Manifest): a request id that occurs exactly once, a mid-frequency
// identifier, a common word, a two-word phrase and a CJK word (written
// between spaces, as the first corpora had it). Mixed-script sentences,
// drawn from a random stream of their own, add what issue 16's queries look
// for: a CJK word inside unspaced Chinese runs, Japanese and Korean words,
// an identifier in camel, Pascal, snake, kebab and file-name forms, and
// BRAID, category and OpenAI. Version changes with the bytes Generate
// writes.
//
// It is test and benchmark infrastructure: nothing in the product imports it.
package benchcorpus
