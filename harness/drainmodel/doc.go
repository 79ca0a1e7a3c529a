// Package drainmodel wires the protocol model of package spec to the
// checker: it loads a TLC .cfg file of tla/ into a spec.Model and the
// modelcheck options the file selects, reads tla/models.json (every model
// with its expected outcome and TLC's figures), and checks one model
// against its record. cmd/checker and the parity test of package spec
// share it, so both judge the models the same way.
package drainmodel
