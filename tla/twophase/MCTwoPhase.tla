----------------------------- MODULE MCTwoPhase -----------------------------
(***************************************************************************)
(* TLC wrapper for TwoPhase: the resource managers as model values and     *)
(* their symmetry (any permutation of RM is a symmetry of TwoPhase).       *)
(***************************************************************************)
EXTENDS TwoPhase, TLC

CONSTANTS r1, r2, r3, r4, r5

RMSymmetry == Permutations(RM)
=============================================================================
