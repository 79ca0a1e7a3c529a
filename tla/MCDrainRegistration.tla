------------------------ MODULE MCDrainRegistration ------------------------
(***************************************************************************)
(* TLC wrapper for DrainRegistration: the model values that name the       *)
(* dispatchers and the brokers. Bounds and switches are set in each         *)
(* MCDrainRegistration*.cfg by plain constant assignments (no              *)
(* substitutions, symmetry, view or constraint), so that our Go checker    *)
(* reads the very same files.                                              *)
(***************************************************************************)
EXTENDS DrainRegistration

CONSTANTS d1, d2, d3   \* dispatcher IDs (model values)
CONSTANTS b1, b2, b3   \* brokers, one per upstream cluster (model values)

=============================================================================
