// Package tla holds the TLA+ module of the protocol, DrainRegistration.tla
// (the folder's other files are TLC's models and their record), embedded,
// so that the tools can quote it: [Property] returns a property's
// definition and the variables it reads, which the checker's HTML report
// shows above a counterexample and as its first columns.
package tla
