// Package tlacfg reads TLC model configuration files (.cfg), so that
// drainproof's checker runs the very models TLC runs.
//
// It understands CONSTANT/CONSTANTS with values (integers, "strings",
// TRUE/FALSE, model values, and sets of those, nested), INIT, NEXT,
// SPECIFICATION, INVARIANT(S), PROPERTY/PROPERTIES, CONSTRAINT(S),
// ACTION_CONSTRAINT(S), SYMMETRY, VIEW and CHECK_DEADLOCK, with TLA+
// comments; the names are the caller's to resolve. Keywords TLC knows but
// a checker may not honour (ALIAS, POSTCONDITION, substitutions with <-)
// are kept in Config.Unsupported, with their lines, for the caller to
// refuse by name. Anything else is an *Error naming the file and line.
package tlacfg
