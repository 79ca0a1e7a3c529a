-------------------------- MODULE DrainRegistration --------------------------
(***************************************************************************)
(* Drain of one capture T during a rolling upgrade, together with the      *)
(* registration of dispatchers with T's event broker.                      *)
(*                                                                         *)
(* The coordinator drives T from ALIVE through DRAINING to STOPPING and    *)
(* declares the drain complete only after it has accepted a zero broker    *)
(* count that provably comes from T's current epoch, while STOPPING, with  *)
(* registration admission closed. The count travels either on T's          *)
(* heartbeat (Transport = "heartbeat", Variant H) or through the           *)
(* LogCoordinator's cache (Transport = "logcoord", Variant L).             *)
(*                                                                         *)
(* Design decisions (see tla/README.md and docs/protocol.md, sections 5    *)
(* and 15): early count (the count rises at admission, before              *)
(* EventStore.RegisterDispatcher, and falls after the last store release); *)
(* a serial request loop (at most one dispatcher between steps); the       *)
(* network is a set of one uniform record shape, bounded by action guards; *)
(* one integer sentinel None; the coordinator starts knowing epoch 1; the  *)
(* coordinator and the LogCoordinator cache are monotone within an epoch.  *)
(*                                                                         *)
(* The Go transcription of this module is package spec (../spec).         *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS
    Dispatchers,    \* dispatcher IDs that may register with T's broker
    TableTriggers,  \* the table-trigger dispatchers among them (no stores)
    MaxEpoch,       \* process lifetimes of T: restarts give epochs 2..MaxEpoch
    MaxReg,         \* REGISTER requests the collectors may issue in total
    MaxMsgs,        \* messages in flight at most (senders wait when full)
    Transport,      \* "heartbeat" (Variant H) or "logcoord" (Variant L)
    Bugs            \* the defects switched on; {} is the correct protocol

BugNames == {"IgnoreBrokerCount", "TrustLivenessResponse", "AcceptStaleEpoch",
             "CountAfterPublish", "NoAdmissionGate", "DecrementBeforeCleanup",
             "LeakOnSchemaFailure", "DoubleDecrement", "DoubleIncrement",
             "UnknownErasesCount"}

ASSUME /\ TableTriggers \subseteq Dispatchers
       /\ MaxEpoch \in Nat \ {0}
       /\ MaxReg \in Nat
       /\ MaxMsgs \in Nat \ {0}
       /\ Transport \in {"heartbeat", "logcoord"}
       /\ Bugs \subseteq BugNames
       /\ "UnknownErasesCount" \in Bugs => Transport = "logcoord"

\* The one "none" sentinel of the integer fields (epochs and counts).
None == -1
\* The liveness field of a message that carries no liveness.
NoLiveness == "NONE"

Livenesses == {"ALIVE", "DRAINING", "STOPPING"}
Rank(l) == CASE l = "ALIVE" -> 0 [] l = "DRAINING" -> 1 [] l = "STOPPING" -> 2
\* The one step forward from l (STOPPING has none).
Succ(l) == CASE l = "ALIVE" -> "DRAINING" [] l = "DRAINING" -> "STOPPING"
               [] l = "STOPPING" -> NoLiveness
MaxLiveness(a, b) == IF Rank(a) >= Rank(b) THEN a ELSE b

\* Broker program counter of one dispatcher.
\*   idle        no registration (never registered, removed, or failed)
\*   admitted    admitted and counted, before EventStore.RegisterDispatcher
\*   subscribed  RegisterDispatcher done, before SchemaStore.RegisterTable
\*   registered  published in the broker's map
\*   removing    marked removed and deleted, store cleanup not yet done
\*   raced       removing, and the background cleanup also decremented
\*               (reachable only under DoubleDecrement)
PcValues == {"idle", "admitted", "subscribed", "registered", "removing", "raced"}

Epochs == 1..MaxEpoch
Counts == (-MaxReg..MaxReg) \cup {None}   \* counts, with the sentinel
Kinds == {"cmd", "resp", "hb", "report", "ans"}

\* The one record shape of every message.
Messages == [kind: Kinds, epoch: Epochs \cup {None},
             liveness: Livenesses \cup {NoLiveness}, count: Counts,
             closed: BOOLEAN]

\* SetNodeLivenessRequest: coordinator -> T.
Cmd(e, l) == [kind |-> "cmd", epoch |-> e, liveness |-> l, count |-> None,
              closed |-> FALSE]
\* SetNodeLivenessResponse: T -> coordinator (never carries a count).
Resp(e, l) == [kind |-> "resp", epoch |-> e, liveness |-> l, count |-> None,
               closed |-> FALSE]
\* NodeHeartbeat: T -> coordinator; carries the count only in Variant H.
Hb(e, l, c, cl) == [kind |-> "hb", epoch |-> e, liveness |-> l, count |-> c,
                    closed |-> cl]
\* EventBrokerDispatcherCount: T's event service -> LogCoordinator.
Report(e, c, cl) == [kind |-> "report", epoch |-> e, liveness |-> NoLiveness,
                     count |-> c, closed |-> cl]
\* EventBrokerDispatcherCountResponse: LogCoordinator -> coordinator.
\* Ans(None, None, FALSE) is the "unknown" answer.
Ans(e, c, cl) == [kind |-> "ans", epoch |-> e, liveness |-> NoLiveness,
                  count |-> c, closed |-> cl]

\* The LogCoordinator's cache when nothing is cached.
NoReport == [epoch |-> None, count |-> None, closed |-> FALSE]

VARIABLES
    \* --- the drained node T (its current process) ---
    epoch,           \* epoch of T's current process
    liveness,        \* T's liveness: ALIVE -> DRAINING -> STOPPING
    admissionClosed, \* T's event service admits no more registrations
    pc,              \* pc[d]: broker program counter of dispatcher d
    count,           \* the broker's atomic dispatcher count (early count)
    subscribed,      \* subscribed[d]: d has an event-store subscription
    schemaRef,       \* schemaRef[d]: d holds a schema-store table reference
    removed,         \* removed[d]: d's stat is marked removed (no live stat)
    \* --- the collectors (environment) ---
    registrations,   \* REGISTER requests issued so far (at most MaxReg)
    \* --- the coordinator ---
    coordEpoch,      \* the epoch of T the coordinator tracks
    coordLiveness,   \* T's liveness observed for coordEpoch
    coordCount,      \* accepted broker count for coordEpoch, or None
    work,            \* maintainer-reported remaining work on T (1 or 0)
    drainedEpoch,    \* epoch declared drained by DrainNode, or None
    \* --- the LogCoordinator (Variant L) ---
    cache,           \* its cached report for T: [epoch, count, closed]
    \* --- the network ---
    net              \* messages in flight: a set of Messages

nodeVars == <<epoch, liveness, admissionClosed, pc, count, subscribed,
              schemaRef, removed>>
coordVars == <<coordEpoch, coordLiveness, coordCount, work, drainedEpoch>>
vars == <<epoch, liveness, admissionClosed, pc, count, subscribed, schemaRef,
          removed, registrations, coordEpoch, coordLiveness, coordCount, work,
          drainedEpoch, cache, net>>

TypeOK ==
    /\ epoch \in Epochs
    /\ liveness \in Livenesses
    /\ admissionClosed \in BOOLEAN
    /\ pc \in [Dispatchers -> PcValues]
    /\ count \in Counts
    /\ subscribed \in [Dispatchers -> BOOLEAN]
    /\ schemaRef \in [Dispatchers -> BOOLEAN]
    /\ removed \in [Dispatchers -> BOOLEAN]
    /\ registrations \in 0..MaxReg
    /\ coordEpoch \in Epochs
    /\ coordLiveness \in Livenesses
    /\ coordCount \in Counts
    /\ work \in 0..1
    /\ drainedEpoch \in Epochs \cup {None}
    /\ cache \in [epoch: Epochs \cup {None}, count: Counts, closed: BOOLEAN]
    /\ net \subseteq Messages
    /\ Cardinality(net) <= MaxMsgs

Init ==
    /\ epoch = 1
    /\ liveness = "ALIVE"
    /\ admissionClosed = FALSE
    /\ pc = [d \in Dispatchers |-> "idle"]
    /\ count = 0
    /\ subscribed = [d \in Dispatchers |-> FALSE]
    /\ schemaRef = [d \in Dispatchers |-> FALSE]
    /\ removed = [d \in Dispatchers |-> TRUE]
    /\ registrations = 0
    /\ coordEpoch = 1
    /\ coordLiveness = "ALIVE"
    /\ coordCount = None
    /\ work = 1
    /\ drainedEpoch = None
    /\ cache = NoReport
    /\ net = {}

-----------------------------------------------------------------------------
(* Helpers *)

\* The event service's serial request loop is inside an add or remove.
Busy == \E d \in Dispatchers : pc[d] \notin {"idle", "registered"}

Registered == {d \in Dispatchers : pc[d] = "registered"}

\* The admission gate lets a REGISTER through.
GateOpen == \/ "NoAdmissionGate" \in Bugs
            \/ ~admissionClosed /\ liveness # "STOPPING"

\* Put m on the network: only when there is room (the bound is a guard).
Send(m) == /\ m \notin net
           /\ Cardinality(net) < MaxMsgs
           /\ net' = net \cup {m}

\* Take m off the network, or keep it (keep = TRUE is duplication).
Consume(m, keep) == net' = IF keep THEN net ELSE net \ {m}

\* Take m (or keep it) and reply r, if the reply fits.
Reply(m, keep, r) ==
    LET base == IF keep THEN net ELSE net \ {m}
    IN  /\ Cardinality(base \cup {r}) <= MaxMsgs
        /\ net' = base \cup {r}

\* A new process of T: a new epoch, ALIVE, and the broker's registrations,
\* subscriptions and schema references are gone.
Restart ==
    /\ epoch < MaxEpoch
    /\ epoch' = epoch + 1
    /\ liveness' = "ALIVE"
    /\ admissionClosed' = FALSE
    /\ pc' = [d \in Dispatchers |-> "idle"]
    /\ count' = 0
    /\ subscribed' = [d \in Dispatchers |-> FALSE]
    /\ schemaRef' = [d \in Dispatchers |-> FALSE]
    /\ removed' = [d \in Dispatchers |-> TRUE]
    /\ UNCHANGED <<registrations, coordVars, cache, net>>

\* The coordinator observes liveness (and, from a Variant H heartbeat, the
\* count) carried by m (C4/C5). A newer epoch resets the observations; an
\* older one is dropped; within an epoch liveness never goes back and the
\* accepted count only falls (a closed sample only falls over time).
Observe(m) ==
    LET usesCount == /\ Transport = "heartbeat"
                     /\ m.kind = "hb"
                     /\ m.liveness = "STOPPING"
                     /\ m.closed
    IN  IF m.epoch > coordEpoch
        THEN /\ coordEpoch' = m.epoch
             /\ coordLiveness' = m.liveness
             /\ coordCount' = IF usesCount THEN m.count ELSE None
        ELSE IF \/ m.epoch = coordEpoch
                \/ "AcceptStaleEpoch" \in Bugs /\ m.epoch < coordEpoch
        THEN /\ coordLiveness' = MaxLiveness(coordLiveness, m.liveness)
             /\ coordCount' = IF usesCount /\ (coordCount = None \/ m.count < coordCount)
                              THEN m.count ELSE coordCount
             /\ UNCHANGED coordEpoch
        ELSE UNCHANGED <<coordEpoch, coordLiveness, coordCount>>

-----------------------------------------------------------------------------
(* Collectors and T's event service (broker) *)

\* A collector sends REGISTER(d) and T's event service loop takes it. Past
\* the admission gate the broker counts d at once (early count) and starts
\* the add; a table trigger touches no store, so its add is one step. A
\* REGISTER for a registered d is idempotent (counted once). A REGISTER
\* after STOPPING closes admission (lazily) and is dropped.
CollectorRegister(d) ==
    /\ ~Busy
    /\ registrations < MaxReg
    /\ pc[d] \in {"idle", "registered"}
    /\ registrations' = registrations + 1
    /\ IF GateOpen
       THEN IF pc[d] = "registered"
            THEN /\ count' = IF "DoubleIncrement" \in Bugs THEN count + 1 ELSE count
                 /\ UNCHANGED <<pc, removed, admissionClosed>>
            ELSE IF d \in TableTriggers
            THEN /\ pc' = [pc EXCEPT ![d] = "registered"]
                 /\ removed' = [removed EXCEPT ![d] = FALSE]
                 /\ count' = count + 1
                 /\ UNCHANGED admissionClosed
            ELSE /\ pc' = [pc EXCEPT ![d] = "admitted"]
                 /\ removed' = [removed EXCEPT ![d] = FALSE]
                 /\ count' = IF "CountAfterPublish" \in Bugs THEN count ELSE count + 1
                 /\ UNCHANGED admissionClosed
       ELSE /\ admissionClosed' = TRUE
            /\ UNCHANGED <<pc, removed, count>>
    /\ UNCHANGED <<epoch, liveness, subscribed, schemaRef, coordVars, cache, net>>

\* The broker's EventStore.RegisterDispatcher(d) succeeds: d is subscribed
\* and its notifier is live.
BrokerSubscribe(d) ==
    /\ pc[d] = "admitted"
    /\ pc' = [pc EXCEPT ![d] = "subscribed"]
    /\ subscribed' = [subscribed EXCEPT ![d] = TRUE]
    /\ UNCHANGED <<epoch, liveness, admissionClosed, count, schemaRef, removed,
                   registrations, coordVars, cache, net>>

\* EventStore.RegisterDispatcher(d) refuses (store closed, reuse miss): the
\* broker drops the stat and rolls the count back.
BrokerSubscribeRefused(d) ==
    /\ pc[d] = "admitted"
    /\ pc' = [pc EXCEPT ![d] = "idle"]
    /\ removed' = [removed EXCEPT ![d] = TRUE]
    /\ count' = IF "CountAfterPublish" \in Bugs THEN count ELSE count - 1
    /\ UNCHANGED <<epoch, liveness, admissionClosed, subscribed, schemaRef,
                   registrations, coordVars, cache, net>>

\* SchemaStore.RegisterTable(d) succeeds: the broker publishes d.
BrokerRegisterTable(d) ==
    /\ pc[d] = "subscribed"
    /\ pc' = [pc EXCEPT ![d] = "registered"]
    /\ schemaRef' = [schemaRef EXCEPT ![d] = TRUE]
    /\ count' = IF "CountAfterPublish" \in Bugs THEN count + 1 ELSE count
    /\ UNCHANGED <<epoch, liveness, admissionClosed, subscribed, removed,
                   registrations, coordVars, cache, net>>

\* SchemaStore.RegisterTable(d) fails (schema store still initialising):
\* the broker marks d removed, unregisters it from the event store, drops
\* it, and rolls the count back last (F-R1). Under LeakOnSchemaFailure
\* the subscription stays and d is not marked removed.
BrokerRegisterTableFails(d) ==
    /\ pc[d] = "subscribed"
    /\ pc' = [pc EXCEPT ![d] = "idle"]
    /\ IF "LeakOnSchemaFailure" \in Bugs
       THEN UNCHANGED <<subscribed, removed>>
       ELSE /\ subscribed' = [subscribed EXCEPT ![d] = FALSE]
            /\ removed' = [removed EXCEPT ![d] = TRUE]
    /\ count' = IF "CountAfterPublish" \in Bugs THEN count ELSE count - 1
    /\ UNCHANGED <<epoch, liveness, admissionClosed, schemaRef, registrations,
                   coordVars, cache, net>>

\* A collector sends REMOVE(d) and T's event service loop takes it: the
\* broker marks d removed and deletes it (compare-and-delete). A table
\* trigger has no store to release, so its removal is one step.
CollectorRemove(d) ==
    /\ ~Busy
    /\ pc[d] = "registered"
    /\ removed' = [removed EXCEPT ![d] = TRUE]
    /\ IF d \in TableTriggers
       THEN /\ pc' = [pc EXCEPT ![d] = "idle"]
            /\ count' = count - 1
       ELSE /\ pc' = [pc EXCEPT ![d] = "removing"]
            /\ count' = IF "DecrementBeforeCleanup" \in Bugs THEN count - 1 ELSE count
    /\ UNCHANGED <<epoch, liveness, admissionClosed, subscribed, schemaRef,
                   registrations, coordVars, cache, net>>

\* The broker finishes removing d: EventStore.UnregisterDispatcher, then
\* SchemaStore.UnregisterTable, then (deferred) the decrement.
BrokerRemoveFinish(d) ==
    /\ pc[d] \in {"removing", "raced"}
    /\ pc' = [pc EXCEPT ![d] = "idle"]
    /\ subscribed' = [subscribed EXCEPT ![d] = FALSE]
    /\ schemaRef' = [schemaRef EXCEPT ![d] = FALSE]
    /\ count' = IF "DecrementBeforeCleanup" \in Bugs THEN count ELSE count - 1
    /\ UNCHANGED <<epoch, liveness, admissionClosed, removed, registrations,
                   coordVars, cache, net>>

\* (DoubleDecrement only) The broker's background inactivity cleanup, not
\* serialised with the request loop, found d before the loop deleted it
\* and also deletes it with a plain Delete and decrements.
BrokerInactivityCleanup(d) ==
    /\ "DoubleDecrement" \in Bugs
    /\ pc[d] = "removing"
    /\ pc' = [pc EXCEPT ![d] = "raced"]
    /\ count' = count - 1
    /\ UNCHANGED <<epoch, liveness, admissionClosed, subscribed, schemaRef,
                   removed, registrations, coordVars, cache, net>>

-----------------------------------------------------------------------------
(* The drained node T *)

\* T's MaintainerManager sends a NodeHeartbeat with its epoch and liveness.
\* Variant H: the event service first closes admission if T is STOPPING,
\* then samples the count, and the heartbeat carries (count, closed).
NodeSendHeartbeat ==
    IF Transport = "heartbeat"
    THEN LET cl == admissionClosed \/ liveness = "STOPPING"
         IN  /\ Send(Hb(epoch, liveness, count, cl))
             /\ admissionClosed' = cl
             /\ UNCHANGED <<epoch, liveness, pc, count, subscribed, schemaRef,
                            removed, registrations, coordVars, cache>>
    ELSE /\ Send(Hb(epoch, liveness, None, FALSE))
         /\ UNCHANGED <<nodeVars, registrations, coordVars, cache>>

\* T receives SetNodeLivenessRequest m. For its own epoch it takes the one
\* step forward m asks for (a skip or a step back changes nothing); for
\* another epoch it changes nothing. It replies with its epoch and liveness.
NodeRecvCommand(m, keep) ==
    /\ m.kind = "cmd"
    /\ LET l == IF m.epoch = epoch /\ m.liveness = Succ(liveness)
                THEN m.liveness ELSE liveness
       IN  /\ liveness' = l
           /\ Reply(m, keep, Resp(epoch, l))
    /\ UNCHANGED <<epoch, admissionClosed, pc, count, subscribed, schemaRef,
                   removed, registrations, coordVars, cache>>

\* (Variant L) T's event service answers the LogCoordinator's broadcast:
\* it closes admission if T is STOPPING, then reports (epoch, count,
\* closed).
ServiceSendReport ==
    /\ Transport = "logcoord"
    /\ LET cl == admissionClosed \/ liveness = "STOPPING"
       IN  /\ Send(Report(epoch, count, cl))
           /\ admissionClosed' = cl
    /\ UNCHANGED <<epoch, liveness, pc, count, subscribed, schemaRef, removed,
                   registrations, coordVars, cache>>

\* T crashes and restarts (unplanned), possibly unseen by the coordinator.
NodeCrashRestart ==
    Restart

\* The upgrade controller restarts T: exactly the process that DrainNode
\* declared drained.
UpgradeRestart ==
    /\ drainedEpoch = epoch
    /\ Restart

-----------------------------------------------------------------------------
(* The coordinator and the maintainers *)

\* The coordinator asks T (at the epoch it tracks) to go DRAINING.
CoordSendDraining ==
    /\ drainedEpoch = None
    /\ coordLiveness = "ALIVE"
    /\ Send(Cmd(coordEpoch, "DRAINING"))
    /\ UNCHANGED <<nodeVars, registrations, coordVars, cache>>

\* The coordinator asks T to go STOPPING once DRAINING is observed and the
\* maintainers report no work left on T (readyToStop).
CoordSendStopping ==
    /\ drainedEpoch = None
    /\ coordLiveness = "DRAINING"
    /\ work = 0
    /\ Send(Cmd(coordEpoch, "STOPPING"))
    /\ UNCHANGED <<nodeVars, registrations, coordVars, cache>>

\* The maintainers move their work off T and report progress.
MaintainerReportProgress ==
    /\ work > 0
    /\ coordLiveness = "DRAINING"
    /\ work' = work - 1
    /\ UNCHANGED <<nodeVars, registrations, coordEpoch, coordLiveness,
                   coordCount, drainedEpoch, cache, net>>

\* The coordinator receives T's heartbeat m.
CoordRecvHeartbeat(m, keep) ==
    /\ m.kind = "hb"
    /\ Consume(m, keep)
    /\ Observe(m)
    /\ UNCHANGED <<nodeVars, registrations, work, drainedEpoch, cache>>

\* The coordinator receives T's SetNodeLivenessResponse m (liveness only).
CoordRecvResponse(m, keep) ==
    /\ m.kind = "resp"
    /\ Consume(m, keep)
    /\ Observe(m)
    /\ UNCHANGED <<nodeVars, registrations, work, drainedEpoch, cache>>

\* (Variant L) The coordinator receives the LogCoordinator's answer m. It
\* accepts a known report of the epoch it tracks, taken with admission
\* closed, after it has observed STOPPING, if it lowers the accepted count
\* (a zero is terminal). An unknown answer changes nothing.
CoordRecvAnswer(m, keep) ==
    /\ m.kind = "ans"
    /\ Consume(m, keep)
    /\ coordCount' =
         IF /\ m.epoch # None
            /\ m.closed
            /\ coordLiveness = "STOPPING"
            /\ \/ m.epoch = coordEpoch
               \/ "AcceptStaleEpoch" \in Bugs /\ m.epoch < coordEpoch
            /\ coordCount = None \/ m.count < coordCount
         THEN m.count
         ELSE IF /\ "UnknownErasesCount" \in Bugs
                 /\ m.epoch = None
                 /\ coordLiveness = "STOPPING"
         THEN 0
         ELSE coordCount
    /\ UNCHANGED <<nodeVars, registrations, coordEpoch, coordLiveness, work,
                   drainedEpoch, cache>>

\* Whether the accepted broker count lets DrainNode return 0. Written as one
\* IF, not as a disjunction: TLC enumerates every true disjunct of an action
\* as a separate (here identical) successor, which would count states
\* generated twice when a bug and a zero count both allow completion.
CountAllowsCompletion ==
    IF "IgnoreBrokerCount" \in Bugs THEN TRUE
    ELSE IF "TrustLivenessResponse" \in Bugs /\ coordCount = None THEN TRUE
    ELSE coordCount = 0

\* DrainNode returns 0: STOPPING observed, no maintainer work, and an
\* accepted broker count of zero, all for the epoch the coordinator tracks.
CoordCompleteDrain ==
    /\ drainedEpoch = None
    /\ coordLiveness = "STOPPING"
    /\ work = 0
    /\ CountAllowsCompletion
    /\ drainedEpoch' = coordEpoch
    /\ UNCHANGED <<nodeVars, registrations, coordEpoch, coordLiveness,
                   coordCount, work, cache, net>>

-----------------------------------------------------------------------------
(* The LogCoordinator (Variant L) *)

\* The LogCoordinator caches T's report m. Monotone within an epoch: a
\* newer epoch replaces the entry, an older one is dropped, a report with
\* admission open never replaces a closed one, and among closed reports the
\* lower count is the newer one.
LogCoordRecvReport(m, keep) ==
    /\ m.kind = "report"
    /\ Consume(m, keep)
    /\ cache' = IF \/ cache.epoch = None
                   \/ m.epoch > cache.epoch
                   \/ /\ m.epoch = cache.epoch
                      /\ \/ ~cache.closed
                         \/ m.closed /\ m.count < cache.count
                THEN [epoch |-> m.epoch, count |-> m.count, closed |-> m.closed]
                ELSE cache
    /\ UNCHANGED <<nodeVars, registrations, coordVars>>

\* The coordinator's periodic query (after STOPPING is observed, until a
\* zero is accepted) reaches the LogCoordinator, which answers with its
\* cached report, or "unknown" when nothing is cached.
LogCoordAnswer ==
    /\ Transport = "logcoord"
    /\ drainedEpoch = None
    /\ coordLiveness = "STOPPING"
    /\ coordCount # 0
    /\ Send(Ans(cache.epoch, cache.count, cache.closed))
    /\ UNCHANGED <<nodeVars, registrations, coordVars, cache>>

\* The cached report of a process that no longer reports (T restarted)
\* expires.
LogCoordExpire ==
    /\ cache.epoch # None
    /\ cache.epoch < epoch
    /\ cache' = NoReport
    /\ UNCHANGED <<nodeVars, registrations, coordVars, net>>

-----------------------------------------------------------------------------
(* The network *)

\* A message in flight is lost.
NetLose(m) ==
    /\ net' = net \ {m}
    /\ UNCHANGED <<nodeVars, registrations, coordVars, cache>>

-----------------------------------------------------------------------------
(* Next: every disjunct is named *)

CollectorRegisters == \E d \in Dispatchers : CollectorRegister(d)
CollectorRemoves == \E d \in Dispatchers : CollectorRemove(d)
BrokerSteps(d) == \/ BrokerSubscribe(d)
                  \/ BrokerSubscribeRefused(d)
                  \/ BrokerRegisterTable(d)
                  \/ BrokerRegisterTableFails(d)
                  \/ BrokerRemoveFinish(d)
BrokerStepsAny == \E d \in Dispatchers : BrokerSteps(d)
BrokerCleanups == \E d \in Dispatchers : BrokerInactivityCleanup(d)
NodeRecvsCommand == \E m \in net : \E keep \in BOOLEAN : NodeRecvCommand(m, keep)
CoordRecvsHeartbeat == \E m \in net : \E keep \in BOOLEAN : CoordRecvHeartbeat(m, keep)
CoordRecvsResponse == \E m \in net : \E keep \in BOOLEAN : CoordRecvResponse(m, keep)
CoordRecvsAnswer == \E m \in net : \E keep \in BOOLEAN : CoordRecvAnswer(m, keep)
LogCoordRecvsReport == \E m \in net : \E keep \in BOOLEAN : LogCoordRecvReport(m, keep)
NetLoses == \E m \in net : NetLose(m)

\* The same receives, restricted to taking the message off the network
\* (keep = FALSE): the fair part of each receive.
NodeTakesCommand == \E m \in net : NodeRecvCommand(m, FALSE)
CoordTakesHeartbeat == \E m \in net : CoordRecvHeartbeat(m, FALSE)
CoordTakesResponse == \E m \in net : CoordRecvResponse(m, FALSE)
CoordTakesAnswer == \E m \in net : CoordRecvAnswer(m, FALSE)
LogCoordTakesReport == \E m \in net : LogCoordRecvReport(m, FALSE)

Next ==
    \/ CollectorRegisters
    \/ CollectorRemoves
    \/ BrokerStepsAny
    \/ BrokerCleanups
    \/ NodeSendHeartbeat
    \/ NodeRecvsCommand
    \/ ServiceSendReport
    \/ NodeCrashRestart
    \/ UpgradeRestart
    \/ CoordSendDraining
    \/ CoordSendStopping
    \/ MaintainerReportProgress
    \/ CoordRecvsHeartbeat
    \/ CoordRecvsResponse
    \/ CoordRecvsAnswer
    \/ CoordCompleteDrain
    \/ LogCoordRecvsReport
    \/ LogCoordAnswer
    \/ LogCoordExpire
    \/ NetLoses

\* Fairness for DrainCompletes. Senders that the network bound can block,
\* the deliveries and the completion step are strongly fair (each is
\* enabled again and again while the network churns); internal broker
\* steps, the maintainers and the collectors' removals are weakly fair.
\* Registering, restarts, store failures, expiry, loss and duplication are
\* not fair. Fairness is on delivery (the receive that takes the message
\* off the network): a receive that keeps the message is duplication, and a
\* behaviour that duplicates one message forever while the network stays
\* full is not fair. Per-message fairness is not needed: the coordinator
\* and the LogCoordinator cache are monotone within an epoch, so once T is
\* quiet every delivery makes progress.
Fairness ==
    /\ \A d \in Dispatchers : WF_vars(BrokerSteps(d))
    /\ \A d \in Dispatchers : WF_vars(CollectorRemove(d))
    /\ WF_vars(MaintainerReportProgress)
    /\ SF_vars(NodeSendHeartbeat)
    /\ SF_vars(ServiceSendReport)
    /\ SF_vars(CoordSendDraining)
    /\ SF_vars(CoordSendStopping)
    /\ SF_vars(LogCoordAnswer)
    /\ SF_vars(NodeTakesCommand)
    /\ SF_vars(CoordTakesHeartbeat)
    /\ SF_vars(CoordTakesResponse)
    /\ SF_vars(CoordTakesAnswer)
    /\ SF_vars(LogCoordTakesReport)
    /\ SF_vars(CoordCompleteDrain)

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Safety invariants *)

\* D5, part 1: while the process declared drained lives, admission is closed.
DrainSafetyClosed ==
    drainedEpoch = epoch => admissionClosed

\* D5, part 2: while the process declared drained lives, its broker has no
\* registered, in-flight or half-removed dispatcher and no store residue.
DrainSafetyEmpty ==
    drainedEpoch = epoch =>
        \A d \in Dispatchers : /\ pc[d] = "idle"
                               /\ ~subscribed[d]
                               /\ ~schemaRef[d]

\* D5: no premature restart.
DrainSafety == DrainSafetyClosed /\ DrainSafetyEmpty

\* R1/D6: outside an add or remove step the count is the number of
\* registered dispatchers (table triggers included); never negative.
CountAccuracy ==
    /\ count >= 0
    /\ ~Busy => count = Cardinality(Registered)

\* R2: while any dispatcher holds a subscription or a schema reference, is
\* registered or is between steps, the (reported) count is at least 1.
NoHiddenRegistration ==
    (\E d \in Dispatchers : \/ pc[d] # "idle"
                            \/ subscribed[d]
                            \/ schemaRef[d]) => count >= 1

\* R3: an idle dispatcher (never added, removed, or after a failed add)
\* has no subscription, no schema reference and is marked removed.
NoTraceWhenIdle ==
    \A d \in Dispatchers :
        pc[d] = "idle" => ~subscribed[d] /\ ~schemaRef[d] /\ removed[d]

\* R4: a live notifier (a subscription whose stat is not marked removed)
\* exists only for a dispatcher being added after its subscription, or
\* registered.
NoLiveNotifierWhenUnknown ==
    \A d \in Dispatchers :
        subscribed[d] /\ ~removed[d] => pc[d] \in {"subscribed", "registered"}

FailureLeavesNoTrace == NoTraceWhenIdle /\ NoLiveNotifierWhenUnknown

\* D2/D8: the coordinator is never ahead of T, never believes more of T's
\* current process than is true, holds a count only for a STOPPING epoch,
\* and a count it holds for T's current process was sampled with
\* admission closed and bounds T's count from above.
NoStaleObservation ==
    /\ coordEpoch <= epoch
    /\ coordEpoch = epoch => Rank(coordLiveness) <= Rank(liveness)
    /\ coordCount # None => coordLiveness = "STOPPING"
    /\ coordEpoch = epoch /\ coordCount # None =>
           admissionClosed /\ count <= coordCount

-----------------------------------------------------------------------------
(* Action properties *)

\* D7/R8: once admission is closed, no registration is admitted and the
\* count never rises (within the process).
NoAdmissionAfterCloseStep ==
    admissionClosed /\ epoch' = epoch =>
        /\ count' <= count
        /\ \A d \in Dispatchers : pc[d] = "idle" => pc'[d] = "idle"

NoAdmissionAfterClose == [][NoAdmissionAfterCloseStep]_vars

\* D1: within an epoch liveness moves one step forward or not at all; a new
\* epoch starts ALIVE.
MonotoneLivenessStep ==
    IF epoch' = epoch
    THEN liveness' = liveness \/ liveness' = Succ(liveness)
    ELSE epoch' > epoch /\ liveness' = "ALIVE"

MonotoneLiveness == [][MonotoneLivenessStep]_vars

-----------------------------------------------------------------------------
(* Liveness *)

\* Collectors issue at most MaxReg REGISTERs, so they stop registering in
\* every behaviour; once they have removed their dispatchers, the drain is
\* eventually reported complete. Written as P ~> Q with P = TRUE.
DrainReported == drainedEpoch # None

DrainCompletes == TRUE ~> DrainReported

=============================================================================
