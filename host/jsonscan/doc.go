// Package jsonscan validates and walks JSON text in place, without
// decoding it into Go values. It exists for the hot read paths (the session
// store's line decoder, the session-query text extractor) that must accept
// exactly what encoding/json accepts while touching each byte once.
//
// Invariants: every function accepts a subset of what encoding/json
// accepts, never more; when one reports failure the caller falls back to
// encoding/json, which then decides (and words the error). Nesting deeper
// than MaxDepth is reported as a failure for that reason. Unquote decodes a
// string token byte for byte as encoding/json does, including its
// replacement of invalid UTF-8 and unpaired surrogates with U+FFFD.
//
// Callers are host packages that have a slow, encoding/json-based path to
// fall back on; nothing here keeps state between calls.
package jsonscan
