--------------------- MODULE MCDrainRegistrationReduced ---------------------
(***************************************************************************)
(* MCDrainRegistration with definitions for TLC's reductions, which the   *)
(* MCDrainRegistration{Symmetry,Constraint,ActionConstraint,View}.cfg      *)
(* models name. Package spec transcribes them (spec/reductions.go,         *)
(* spec/symmetry.go), so our checker reads the same cfg files and must     *)
(* find TLC's figures (tla/models.json).                                   *)
(***************************************************************************)
EXTENDS MCDrainRegistration, TLC, FiniteSets

\* SYMMETRY: ordinary dispatchers are interchangeable (table triggers are
\* not: they touch no store).
OrdinarySymmetry == Permutations(Dispatchers \ TableTriggers)

\* CONSTRAINT: explore only states with at most one message in flight
\* (states with two are generated and checked, not explored).
NetAtMostOne == Cardinality(net) <= 1

\* ACTION_CONSTRAINT: no restart but the upgrade's (the process that the
\* coordinator declared drained).
NoCrashRestartStep == epoch' = epoch \/ drainedEpoch = epoch

\* VIEW: every variable but the maintainers' work.
WithoutWork == <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                 pc, brk, count, subscribed, schemaRef, removed, sample,
                 lastReport, registrations, regs, coordEpoch, coordVersion,
                 coordLiveness, coordCount, drainedEpoch, legacyEpoch, cache,
                 net>>
=============================================================================
