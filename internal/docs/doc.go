// Package docs holds the tests that keep the repository's documents
// self-contained: every rule code (R1, D5, F-R1, …) and every section
// (§N) the code and the documents cite is defined in docs/protocol.md,
// every relative link of a Markdown file leads to a file of the
// repository, nothing cites documents that are not in it, and the one
// model-to-Go mapping (tla/README.md) cites only Go identifiers that
// exist and TLA+ names the module has.
//
// It has no code of its own; `go test ./internal/docs` runs the checks.
package docs
