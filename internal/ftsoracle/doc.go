// Package ftsoracle asks SQLite's FTS5 what it makes of texts: an
// in-memory table with a given tokenizer and its instance vocabulary. It
// is the oracle the search text's Go tokenizer is generated from
// (host/searchtext/internal/gentables) and tested against, and the one
// snippets' first matches are checked against (FTS5's highlight()).
package ftsoracle
