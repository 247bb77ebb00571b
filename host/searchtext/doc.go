// Package searchtext turns text into the form the session-search index
// tokenizes, so that FTS5's unicode61 tokenizer, which only splits at
// characters that are neither letters nor digits, also finds words inside
// unspaced CJK text and the parts of identifiers.
//
// The indexed form is the original text with one space inserted at every
// cut between two letters or digits:
//
//   - before and after every Han, Hiragana, Katakana or Hangul character,
//     so each is a token of its own and any run of 1+ characters of a CJK
//     run is a phrase of its tokens ("请检查数据库连接" holds "数据库");
//   - at camelCase and PascalCase boundaries: a lower-case letter followed
//     by an upper-case one ("parseSessionHeader" is parse Session Header),
//     and before the last letter of an upper-case run that a lower-case run
//     of two or more letters follows ("HTTPServer" is HTTP Server, while
//     "IDs" and "URLs" stay whole). snake_case, kebab-case and dotted names
//     need no cut: unicode61 already separates at '_', '-' and '.'.
//
// Every identifier cut this way is also appended whole after the text
// (behind a private-use sentinel token that no query can contain, so no
// phrase runs from the text into the appended tokens or between two of
// them): "parsesessionheader" still finds "parseSessionHeader".
//
// Queries take the same form without the appended tokens (Query), which is
// what makes a query's phrase a phrase of the document: "SessionHeader",
// "session header" and "parse_session_header" all find
// "parseSessionHeader"; "AI" finds "OpenAI" (a camel part) but never
// "BRAID" or "braid", where nothing marks a part. A query holding a
// camel-case identifier is also searched in its Whole form (CJK cuts only),
// so "OpenAI" finds "openai" too and a document holding the identifier
// exactly, which matches both forms, ranks first. A cut is inserted only
// between two letters or digits, so text with no CJK and no camel case is
// its own form, byte for byte, and tokenizes exactly as before.
//
// Form keeps where it inserted what, so a highlight computed on the form
// maps back to the original text's code points (Restore, Origin), and it
// finds the first match itself (FirstMatch), where FTS5's highlight()
// would start its first span, for any text: snippets need no SQL.
//
// Tokens splits a text into the tokens the index's tokenizer, unicode61
// remove_diacritics 2, makes of it: the same tokens in the same order, each
// with the term FTS5 stores (folded, cut to MaxTokenBytes) and the byte
// range it was read from. It must equal FTS5 exactly, because bm25 ranks by
// counts of FTS5's tokens: a phrase's instances or a document's length
// counted in Go any other way would rank differently from the index. So
// the behaviour of each character is not ported by hand but learnt from
// SQLite: tables.go is generated ("go generate", after every upgrade of
// modernc.org/sqlite) by internal/gentables, which asks FTS5 about every
// code point, and the tests compare Tokens with FTS5 on every code point
// and on random text. FTS5's character tables are older than current
// Unicode, so Tokens is not unicode.IsLetter: U+1F600 😀 is a separator,
// while a code point FTS5's tables do not know, like U+1F3F3 🏳, is a
// letter.
//
// The package is pure (no state, no I/O); host/sessionquery/searchindex calls it for
// every document it indexes and every query it runs.
package searchtext
