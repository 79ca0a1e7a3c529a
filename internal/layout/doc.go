// Package layout holds the test that keeps the tree cut by role
// (docs/ARCHITECTURE.md): the product (impl/) never imports the
// verification harness (harness/), the model (spec/), the checker
// (modelcheck/) or the CLI; the checker and the .cfg reader import nothing
// of ours; the model imports at most the model's names (tla/names); and
// only the harness and the commands import the harness.
//
// It has no code of its own; `go test ./internal/layout` runs the check
// over `go list`.
package layout
