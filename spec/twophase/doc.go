// Package twophase is the Two-Phase Commit protocol of tlaplus/Examples
// (specifications/transaction_commit/TwoPhase.tla, by Leslie Lamport),
// transcribed for the modelcheck checker. It calibrates the checker
// against TLC's published figures: with 3 resource managers TLC reports
// 288 distinct states, 1,146 generated and depth 11; with 5, 8,832 distinct.
//
// A state packs every TLA+ variable into one uint64, so the model measures
// the checker rather than itself. Bug plants a defect (the TM commits once
// any resource manager has prepared) that breaks TCConsistent.
package twophase
