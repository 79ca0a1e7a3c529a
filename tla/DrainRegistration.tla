-------------------------- MODULE DrainRegistration --------------------------
(***************************************************************************)
(* Drain of one capture T during a rolling upgrade, together with the      *)
(* registration of dispatchers with T's event brokers (one broker per      *)
(* upstream cluster).                                                       *)
(*                                                                         *)
(* The coordinator drives T from ALIVE through DRAINING to STOPPING and    *)
(* declares the drain complete only after it has accepted a zero           *)
(* dispatcher count that provably comes from T's current epoch, while      *)
(* STOPPING, with registration admission closed. The count travels either  *)
(* on T's heartbeat (Transport = "heartbeat", Variant H) or through the    *)
(* LogCoordinator's cache (Transport = "logcoord", Variant L).             *)
(*                                                                         *)
(* The model takes the steps the implementation takes (impl/eventservice,  *)
(* impl/node, impl/coordinator, impl/logcoord): the service closes         *)
(* admission broker by broker, a report sums the brokers' counts one       *)
(* broker at a time, an admission is a service-level gate check followed   *)
(* by one compare-and-swap on the broker's count word, a failed            *)
(* registration is rolled back step by step, REGISTER requests travel      *)
(* through a lossy network, the LogCoordinator's TTL expires live entries, *)
(* and the coordinator waits on an unknown version and gives legacy nodes  *)
(* the hard-restart answer. tla/README.md maps every action to its Go code *)
(* and keeps the divergence log; the rules are in docs/protocol.md.        *)
(*                                                                         *)
(* The Go transcription of this module is package spec (../spec).         *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS
    Dispatchers,    \* dispatcher IDs that may register with T's brokers
    TableTriggers,  \* the table-trigger dispatchers among them (no stores)
    Brokers,        \* T's event brokers, one per upstream cluster
    Versions,       \* versions a process of T may run: "new", "legacy"
    MaxEpoch,       \* process lifetimes of T: restarts give epochs 2..MaxEpoch
    MaxReg,         \* REGISTER requests the collectors may send in total
    MaxMsgs,        \* messages in flight at most (senders wait when full)
    Transport,      \* "heartbeat" (Variant H) or "logcoord" (Variant L)
    Bugs            \* the defects switched on; {} is the correct protocol

BugNames == {"IgnoreBrokerCount", "TrustLivenessResponse", "AcceptStaleEpoch",
             "CountAfterPublish", "NoAdmissionGate", "DecrementBeforeCleanup",
             "LeakOnSchemaFailure", "DoubleDecrement", "DoubleIncrement",
             "UnknownErasesCount", "SampleBeforeClose", "ClosedBeforeBrokers",
             "RollbackBeforeUnsubscribe", "SkipDraining", "NodeAcceptsSkip",
             "LegacyOnUnknown", "NoReReport"}

ASSUME /\ TableTriggers \subseteq Dispatchers
       /\ Brokers # {}
       /\ Versions # {} /\ Versions \subseteq {"new", "legacy"}
       /\ MaxEpoch \in Nat \ {0}
       /\ MaxReg \in Nat
       /\ MaxMsgs \in Nat \ {0}
       /\ Transport \in {"heartbeat", "logcoord"}
       /\ Bugs \subseteq BugNames
       /\ "UnknownErasesCount" \in Bugs => Transport = "logcoord"
       /\ "NoReReport" \in Bugs => Transport = "logcoord"

\* The one "none" sentinel of the integer fields (epochs and counts).
None == -1
\* The liveness field of a message that carries none.
NoLiveness == "NONE"
\* The broker of an idle dispatcher.
NoBroker == "none"

Livenesses == {"ALIVE", "DRAINING", "STOPPING"}
Rank(l) == CASE l = "ALIVE" -> 0 [] l = "DRAINING" -> 1 [] l = "STOPPING" -> 2
\* The one step forward from l (STOPPING has none).
Succ(l) == CASE l = "ALIVE" -> "DRAINING" [] l = "DRAINING" -> "STOPPING"
               [] l = "STOPPING" -> NoLiveness
MaxLiveness(a, b) == IF Rank(a) >= Rank(b) THEN a ELSE b

\* A broker's program counter for one dispatcher, in the order of the code
\* (impl/eventservice Service.register, broker.add, broker.remove):
\*   idle        no registration (never registered, removed, or failed)
\*   gated       REGISTER taken by the request loop past the service's gate
\*               check, before the broker's compare-and-swap
\*   regated     the same for a REGISTER of a registered dispatcher
\*   replacing   a re-registration admitted and counted; the old
\*               registration not yet released
\*   admitted    admitted and counted, before EventStore.RegisterDispatcher
\*   subscribed  RegisterDispatcher done, before SchemaStore.RegisterTable
\*   registered  published in the broker's table
\*   failed      RegisterTable failed and d marked removed; the store
\*               release and the count's rollback are still to come
\*   unsubscribe (RollbackBeforeUnsubscribe only) rolled back, the store
\*               release still to come
\*   rollback    nothing held any more; the count's rollback still to come
\*   removing    marked removed and deleted, store cleanup not yet done
\*   raced       removing, and the background cleanup also decremented
\*               (reachable only under DoubleDecrement)
PcValues == {"idle", "gated", "regated", "replacing", "admitted", "subscribed",
             "registered", "failed", "unsubscribe", "rollback", "removing",
             "raced"}

Epochs == 1..MaxEpoch
Counts == (-MaxReg..MaxReg) \cup {None}   \* counts, with the sentinel
Kinds == {"cmd", "resp", "hb", "report", "query", "ans"}

\* The one record shape of every message between T, the coordinator and
\* the LogCoordinator.
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
\* CountQuery: coordinator -> LogCoordinator, the coordinator's periodic
\* question for T's broker count. It names T only (the one node of the
\* model), not the epoch the coordinator tracks.
Query == [kind |-> "query", epoch |-> None, liveness |-> NoLiveness,
          count |-> None, closed |-> FALSE]
\* EventBrokerDispatcherCountResponse: LogCoordinator -> coordinator.
\* Ans(None, None, FALSE) is the "unknown" answer.
Ans(e, c, cl) == [kind |-> "ans", epoch |-> e, liveness |-> NoLiveness,
                  count |-> c, closed |-> cl]

\* A collector's REGISTER request: dispatcher d, at the broker of cluster b.
RegRequests == [disp: Dispatchers, broker: Brokers]

\* The LogCoordinator's cache when nothing is cached.
NoReport == [epoch |-> None, count |-> None, closed |-> FALSE]

\* The report being sampled when none is: phase "idle".
\*   "liveness"  (heartbeat) the heartbeat has read T's liveness
\*   "reading"   the report has read the gate and sums the brokers' counts
NoSample == [phase |-> "idle", liveness |-> NoLiveness, closed |-> FALSE,
             read |-> {}, sum |-> 0]

\* The last report the service sent, when none was (kept by NoReReport only).
NoLastReport == [count |-> None, closed |-> FALSE]

VARIABLES
    \* --- the drained node T (its current process) ---
    epoch,           \* epoch of T's current process
    version,         \* the version T's current process runs
    liveness,        \* T's liveness: ALIVE -> DRAINING -> STOPPING
    closing,         \* the event service has begun to close admission
    gateClosed,      \* gateClosed[b]: broker b's copy of the gate bit is set
    admissionClosed, \* the event service's gate is closed (every broker's bit)
    pc,              \* pc[d]: broker program counter of dispatcher d
    brk,             \* brk[d]: the broker d's registration is at, or NoBroker
    count,           \* count[b]: broker b's dispatcher count (early count)
    subscribed,      \* subscribed[d]: d has an event-store subscription
    schemaRef,       \* schemaRef[d]: d holds a schema-store table reference
    removed,         \* removed[d]: d's stat is marked removed (no live stat)
    sample,          \* the report being sampled (one reporter)
    lastReport,      \* the last report sent (changes only under NoReReport)
    \* --- the collectors (environment) ---
    registrations,   \* REGISTER requests sent so far (at most MaxReg)
    regs,            \* REGISTER requests in flight: a set of RegRequests
    \* --- the coordinator ---
    coordEpoch,      \* the epoch of T the coordinator tracks
    coordVersion,    \* the version of that process: "unknown", "new", "legacy"
    coordLiveness,   \* T's liveness observed for coordEpoch
    coordCount,      \* accepted dispatcher count for coordEpoch, or None
    work,            \* maintainer-reported remaining work on T (1 or 0)
    drainedEpoch,    \* epoch declared drained by DrainNode, or None
    legacyEpoch,     \* epoch given the legacy hard-restart answer, or None
    \* --- the LogCoordinator (Variant L) ---
    cache,           \* its cached report for T: [epoch, count, closed]
    \* --- the network ---
    net              \* messages in flight: a set of Messages

brokerVars == <<closing, gateClosed, admissionClosed, pc, brk, count,
                subscribed, schemaRef, removed, sample, lastReport>>
nodeVars == <<epoch, version, liveness, brokerVars>>
envVars == <<registrations, regs>>
coordVars == <<coordEpoch, coordVersion, coordLiveness, coordCount, work,
               drainedEpoch, legacyEpoch>>
vars == <<nodeVars, envVars, coordVars, cache, net>>

TypeOK ==
    /\ epoch \in Epochs
    /\ version \in Versions
    /\ liveness \in Livenesses
    /\ closing \in BOOLEAN
    /\ gateClosed \in [Brokers -> BOOLEAN]
    /\ admissionClosed \in BOOLEAN
    /\ pc \in [Dispatchers -> PcValues]
    /\ brk \in [Dispatchers -> Brokers \cup {NoBroker}]
    /\ count \in [Brokers -> 0..MaxReg]
    /\ subscribed \in [Dispatchers -> BOOLEAN]
    /\ schemaRef \in [Dispatchers -> BOOLEAN]
    /\ removed \in [Dispatchers -> BOOLEAN]
    /\ sample \in [phase: {"idle", "liveness", "reading"},
                   liveness: Livenesses \cup {NoLiveness}, closed: BOOLEAN,
                   read: SUBSET Brokers, sum: 0..MaxReg]
    /\ lastReport \in [count: Counts, closed: BOOLEAN]
    /\ registrations \in 0..MaxReg
    /\ regs \subseteq RegRequests
    /\ coordEpoch \in Epochs
    /\ coordVersion \in {"unknown", "new", "legacy"}
    /\ coordLiveness \in Livenesses
    /\ coordCount \in Counts
    /\ work \in 0..1
    /\ drainedEpoch \in Epochs \cup {None}
    /\ legacyEpoch \in Epochs \cup {None}
    /\ cache \in [epoch: Epochs \cup {None}, count: Counts, closed: BOOLEAN]
    /\ net \subseteq Messages
    /\ Cardinality(net) <= MaxMsgs

Init ==
    /\ epoch = 1
    /\ version \in Versions
    /\ liveness = "ALIVE"
    /\ closing = FALSE
    /\ gateClosed = [b \in Brokers |-> FALSE]
    /\ admissionClosed = FALSE
    /\ pc = [d \in Dispatchers |-> "idle"]
    /\ brk = [d \in Dispatchers |-> NoBroker]
    /\ count = [b \in Brokers |-> 0]
    /\ subscribed = [d \in Dispatchers |-> FALSE]
    /\ schemaRef = [d \in Dispatchers |-> FALSE]
    /\ removed = [d \in Dispatchers |-> TRUE]
    /\ sample = NoSample
    /\ lastReport = NoLastReport
    /\ registrations = 0
    /\ regs = {}
    /\ coordEpoch = 1
    /\ coordVersion = "unknown"
    /\ coordLiveness = "ALIVE"
    /\ coordCount = None
    /\ work = 1
    /\ drainedEpoch = None
    /\ legacyEpoch = None
    /\ cache = NoReport
    /\ net = {}

-----------------------------------------------------------------------------
(* Helpers *)

\* The sum of the brokers' counts: what a report would read if it read
\* every broker at once (the invariants' view; reports read one by one).
RECURSIVE SumOver(_)
SumOver(S) == IF S = {} THEN 0
              ELSE LET b == CHOOSE x \in S : TRUE
                   IN  count[b] + SumOver(S \ {b})
TotalCount == SumOver(Brokers)

\* The event service's serial request loop is inside an add or remove.
Busy == \E d \in Dispatchers : pc[d] \notin {"idle", "registered"}

\* The dispatchers registered at broker b.
RegisteredAt(b) == {d \in Dispatchers : pc[d] = "registered" /\ brk[d] = b}

\* The service-level gate check of a REGISTER (Service.register: the
\* closed flag and the Stopping callback) lets it through to the broker.
GateCheckOpen == \/ "NoAdmissionGate" \in Bugs
                 \/ ~admissionClosed /\ liveness # "STOPPING"

\* The broker's gate bit refuses an admission (the compare-and-swap sees it).
BrokerRefuses(b) == gateClosed[b] /\ "NoAdmissionGate" \notin Bugs

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

\* A new process of T: a new epoch, a version, ALIVE, and the brokers'
\* registrations, subscriptions, schema references and gate are gone.
Restart ==
    /\ epoch < MaxEpoch
    /\ epoch' = epoch + 1
    /\ version' \in Versions
    /\ liveness' = "ALIVE"
    /\ closing' = FALSE
    /\ gateClosed' = [b \in Brokers |-> FALSE]
    /\ admissionClosed' = FALSE
    /\ pc' = [d \in Dispatchers |-> "idle"]
    /\ brk' = [d \in Dispatchers |-> NoBroker]
    /\ count' = [b \in Brokers |-> 0]
    /\ subscribed' = [d \in Dispatchers |-> FALSE]
    /\ schemaRef' = [d \in Dispatchers |-> FALSE]
    /\ removed' = [d \in Dispatchers |-> TRUE]
    /\ sample' = NoSample
    /\ lastReport' = NoLastReport
    /\ UNCHANGED <<envVars, coordVars, cache, net>>

\* The coordinator observes liveness (and, from a Variant H heartbeat, the
\* count) carried by m (C4/C5). A newer epoch resets the observations (the
\* version of the new process is unknown); an older one is dropped; within
\* an epoch liveness never goes back and the accepted count only falls (a
\* closed sample only falls over time).
\* The coordinator's code also requires m.closed for a heartbeat's count;
\* the model leaves that test out: a STOPPING heartbeat is always closed
\* (T reads its liveness before the report, and the report closes
\* admission first when STOPPING), so the test is dead, and without it the
\* model's coordinator accepts at least what the code's does
\* (tla/README.md, divergence log).
Observe(m) ==
    LET usesCount == /\ Transport = "heartbeat"
                     /\ m.kind = "hb"
                     /\ m.count # None
                     /\ m.liveness = "STOPPING"
    IN  IF m.epoch > coordEpoch
        THEN /\ coordEpoch' = m.epoch
             /\ coordVersion' = "unknown"
             /\ coordLiveness' = m.liveness
             /\ coordCount' = IF usesCount THEN m.count ELSE None
        ELSE IF \/ m.epoch = coordEpoch
                \/ "AcceptStaleEpoch" \in Bugs /\ m.epoch < coordEpoch
        THEN /\ coordLiveness' = MaxLiveness(coordLiveness, m.liveness)
             /\ coordCount' = IF usesCount /\ (coordCount = None \/ m.count < coordCount)
                              THEN m.count ELSE coordCount
             /\ UNCHANGED <<coordEpoch, coordVersion>>
        ELSE UNCHANGED <<coordEpoch, coordVersion, coordLiveness, coordCount>>

-----------------------------------------------------------------------------
(* Collectors and T's event service (brokers)                              *)
(*                                                                         *)
(* The request loop is serial (~Busy): it takes a REGISTER or a REMOVE     *)
(* only between the steps of another. Each step below is one atomic        *)
(* effect of the Go code that a concurrent Report, CloseAdmission or       *)
(* store notification can observe; tla/README.md names the Go line.        *)

\* A collector sends REGISTER(d) for the broker of cluster b: a first
\* registration, a retry after a refusal or a loss, or a re-registration.
\* The request stream does not duplicate (a resend is a new REGISTER and
\* spends the collectors' budget), so MaxReg bounds every count.
CollectorSendRegister(d, b) ==
    LET r == [disp |-> d, broker |-> b]
    IN  /\ registrations < MaxReg
        /\ r \notin regs
        /\ registrations' = registrations + 1
        /\ regs' = regs \cup {r}
        /\ UNCHANGED <<nodeVars, coordVars, cache, net>>

\* A REGISTER in flight is lost.
NetLoseRegister(r) ==
    /\ regs' = regs \ {r}
    /\ UNCHANGED <<nodeVars, registrations, coordVars, cache, net>>

\* The request loop takes REGISTER r off the network and runs the
\* service-level gate check (Service.register: the closed flag, then the
\* Stopping callback). Open: the request goes on to the broker's
\* compare-and-swap. Closed: refused; if T is STOPPING the refusal first
\* starts closing admission (gateOpen calls CloseAdmission). A dispatcher
\* ID registers with one broker at a time: a REGISTER for d at another
\* broker than d's waits.
ServiceRecvRegister(r) ==
    LET d == r.disp
        b == r.broker
    IN  /\ ~Busy
        /\ \/ pc[d] = "idle"
           \/ pc[d] = "registered" /\ brk[d] = b
        /\ regs' = regs \ {r}
        /\ IF GateCheckOpen
           THEN /\ pc' = [pc EXCEPT ![d] = IF pc[d] = "idle" THEN "gated" ELSE "regated"]
                /\ brk' = [brk EXCEPT ![d] = b]
                /\ UNCHANGED closing
           ELSE /\ closing' = (closing \/ liveness = "STOPPING")
                /\ UNCHANGED <<pc, brk>>
        /\ UNCHANGED <<epoch, version, liveness, gateClosed, admissionClosed,
                       count, subscribed, schemaRef, removed, sample,
                       lastReport, registrations, coordVars, cache, net>>

\* The broker's admission: ONE compare-and-swap on b's count word, which
\* carries the gate bit and the count (Service.register's inline CAS and
\* Service.admit): refused if the bit is set, otherwise the count rises at
\* once (early count). A table trigger touches no store, so its add ends
\* here. A re-registration is counted now; its old registration is
\* released next (BrokerReleaseOld), except under DoubleIncrement, which
\* keeps the old one and counts the ID twice.
BrokerAdmit(d) ==
    LET b == brk[d]
        again == pc[d] = "regated"
        inc == IF "CountAfterPublish" \in Bugs /\ ~(d \in TableTriggers /\ ~again)
               THEN 0 ELSE 1
    IN  /\ pc[d] \in {"gated", "regated"}
        /\ IF BrokerRefuses(b)
           THEN /\ pc' = [pc EXCEPT ![d] = IF again THEN "registered" ELSE "idle"]
                /\ brk' = [brk EXCEPT ![d] = IF again THEN b ELSE NoBroker]
                /\ UNCHANGED <<count, removed>>
           ELSE IF again /\ "DoubleIncrement" \in Bugs
           THEN /\ pc' = [pc EXCEPT ![d] = "registered"]
                /\ count' = [count EXCEPT ![b] = @ + 1]
                /\ UNCHANGED <<brk, removed>>
           ELSE /\ pc' = [pc EXCEPT ![d] =
                            IF again THEN "replacing"
                            ELSE IF d \in TableTriggers THEN "registered"
                            ELSE "admitted"]
                /\ removed' = IF again THEN removed ELSE [removed EXCEPT ![d] = FALSE]
                /\ count' = [count EXCEPT ![b] = @ + inc]
                /\ UNCHANGED brk
        /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed,
                       admissionClosed, subscribed, schemaRef, sample,
                       lastReport, envVars, coordVars, cache, net>>

\* A re-registration releases the old registration (broker.remove of the
\* old entry: mark removed, delete, release its stores, decrement); the new
\* registration, already counted, goes on as a first one. A table trigger's
\* new registration is published at once.
BrokerReleaseOld(d) ==
    /\ pc[d] = "replacing"
    /\ pc' = [pc EXCEPT ![d] = IF d \in TableTriggers THEN "registered" ELSE "admitted"]
    /\ subscribed' = [subscribed EXCEPT ![d] = FALSE]
    /\ schemaRef' = [schemaRef EXCEPT ![d] = FALSE]
    /\ removed' = [removed EXCEPT ![d] = FALSE]
    /\ count' = [count EXCEPT ![brk[d]] = @ - 1]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   brk, sample, lastReport, envVars, coordVars, cache, net>>

\* The broker's EventStore.RegisterDispatcher(d) succeeds: d is subscribed
\* and its notifier is live.
BrokerSubscribe(d) ==
    /\ pc[d] = "admitted"
    /\ pc' = [pc EXCEPT ![d] = "subscribed"]
    /\ subscribed' = [subscribed EXCEPT ![d] = TRUE]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   brk, count, schemaRef, removed, sample, lastReport, envVars,
                   coordVars, cache, net>>

\* EventStore.RegisterDispatcher(d) refuses (store closed, reuse miss): the
\* broker marks d removed; the count's rollback comes next.
BrokerSubscribeRefused(d) ==
    /\ pc[d] = "admitted"
    /\ pc' = [pc EXCEPT ![d] = "rollback"]
    /\ removed' = [removed EXCEPT ![d] = TRUE]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   brk, count, subscribed, schemaRef, sample, lastReport, envVars,
                   coordVars, cache, net>>

\* SchemaStore.RegisterTable(d) succeeds: the broker publishes d.
BrokerRegisterTable(d) ==
    /\ pc[d] = "subscribed"
    /\ pc' = [pc EXCEPT ![d] = "registered"]
    /\ schemaRef' = [schemaRef EXCEPT ![d] = TRUE]
    /\ count' = IF "CountAfterPublish" \in Bugs
                THEN [count EXCEPT ![brk[d]] = @ + 1] ELSE count
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   brk, subscribed, removed, sample, lastReport, envVars,
                   coordVars, cache, net>>

\* SchemaStore.RegisterTable(d) fails (schema store still initialising):
\* the broker marks d removed first (F-R1's order: no notification sees a
\* live dispatcher); the store release and the rollback come next. Under
\* LeakOnSchemaFailure there is no mark and no release: only the rollback.
BrokerRegisterTableFails(d) ==
    /\ pc[d] = "subscribed"
    /\ IF "LeakOnSchemaFailure" \in Bugs
       THEN /\ pc' = [pc EXCEPT ![d] = "rollback"]
            /\ UNCHANGED removed
       ELSE /\ pc' = [pc EXCEPT ![d] = "failed"]
            /\ removed' = [removed EXCEPT ![d] = TRUE]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   brk, count, subscribed, schemaRef, sample, lastReport, envVars,
                   coordVars, cache, net>>

\* A failed add releases d's subscription (EventStore.UnregisterDispatcher).
BrokerUnsubscribe(d) ==
    /\ pc[d] \in {"failed", "unsubscribe"}
    /\ pc[d] = "failed" => "RollbackBeforeUnsubscribe" \notin Bugs
    /\ pc' = [pc EXCEPT ![d] = IF pc[d] = "failed" THEN "rollback" ELSE "idle"]
    /\ brk' = IF pc[d] = "failed" THEN brk ELSE [brk EXCEPT ![d] = NoBroker]
    /\ subscribed' = [subscribed EXCEPT ![d] = FALSE]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   count, schemaRef, removed, sample, lastReport, envVars,
                   coordVars, cache, net>>

\* A failed add rolls its early count back (broker.rollback), last. Under
\* RollbackBeforeUnsubscribe the rollback comes before the store release.
BrokerRollback(d) ==
    /\ \/ pc[d] = "rollback"
       \/ pc[d] = "failed" /\ "RollbackBeforeUnsubscribe" \in Bugs
    /\ pc' = [pc EXCEPT ![d] = IF pc[d] = "rollback" THEN "idle" ELSE "unsubscribe"]
    /\ brk' = IF pc[d] = "rollback" THEN [brk EXCEPT ![d] = NoBroker] ELSE brk
    /\ count' = IF "CountAfterPublish" \in Bugs
                THEN count ELSE [count EXCEPT ![brk[d]] = @ - 1]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   subscribed, schemaRef, removed, sample, lastReport, envVars,
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
            /\ brk' = [brk EXCEPT ![d] = NoBroker]
            /\ count' = [count EXCEPT ![brk[d]] = @ - 1]
       ELSE /\ pc' = [pc EXCEPT ![d] = "removing"]
            /\ count' = IF "DecrementBeforeCleanup" \in Bugs
                        THEN [count EXCEPT ![brk[d]] = @ - 1] ELSE count
            /\ UNCHANGED brk
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   subscribed, schemaRef, sample, lastReport, envVars, coordVars,
                   cache, net>>

\* The broker finishes removing d: EventStore.UnregisterDispatcher, then
\* SchemaStore.UnregisterTable, then the decrement.
BrokerRemoveFinish(d) ==
    /\ pc[d] \in {"removing", "raced"}
    /\ pc' = [pc EXCEPT ![d] = "idle"]
    /\ brk' = [brk EXCEPT ![d] = NoBroker]
    /\ subscribed' = [subscribed EXCEPT ![d] = FALSE]
    /\ schemaRef' = [schemaRef EXCEPT ![d] = FALSE]
    /\ count' = IF "DecrementBeforeCleanup" \in Bugs
                THEN count ELSE [count EXCEPT ![brk[d]] = @ - 1]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   removed, sample, lastReport, envVars, coordVars, cache, net>>

\* (DoubleDecrement only) The broker's background inactivity cleanup, not
\* serialised with the request loop, found d before the loop deleted it
\* and also deletes it with a plain Delete and decrements.
BrokerInactivityCleanup(d) ==
    /\ "DoubleDecrement" \in Bugs
    /\ pc[d] = "removing"
    /\ pc' = [pc EXCEPT ![d] = "raced"]
    /\ count' = [count EXCEPT ![brk[d]] = @ - 1]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   brk, subscribed, schemaRef, removed, sample, lastReport,
                   envVars, coordVars, cache, net>>

-----------------------------------------------------------------------------
(* Closing admission, step by step (Service.CloseAdmission)                *)

\* Some goroutine that finds T STOPPING (the node's liveness step, a report,
\* a refused registration) begins to close admission: closing is set.
ServiceStartClose ==
    /\ liveness = "STOPPING"
    /\ ~closing
    /\ closing' = TRUE
    /\ UNCHANGED <<epoch, version, liveness, gateClosed, admissionClosed, pc,
                   brk, count, subscribed, schemaRef, removed, sample,
                   lastReport, envVars, coordVars, cache, net>>

\* The close sets broker b's copy of the gate bit (gate.Or(gateClosed)).
\* From here on b's compare-and-swap refuses every admission.
ServiceCloseBroker(b) ==
    /\ closing
    /\ ~gateClosed[b]
    /\ gateClosed' = [gateClosed EXCEPT ![b] = TRUE]
    /\ UNCHANGED <<epoch, version, liveness, closing, admissionClosed, pc, brk,
                   count, subscribed, schemaRef, removed, sample, lastReport,
                   envVars, coordVars, cache, net>>

\* The close ends: closed is set, after every broker's bit (under
\* ClosedBeforeBrokers, before them).
ServiceFinishClose ==
    /\ closing
    /\ ~admissionClosed
    /\ "ClosedBeforeBrokers" \notin Bugs => \A b \in Brokers : gateClosed[b]
    /\ admissionClosed' = TRUE
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, pc, brk, count,
                   subscribed, schemaRef, removed, sample, lastReport, envVars,
                   coordVars, cache, net>>

-----------------------------------------------------------------------------
(* The count report, step by step (Node.Heartbeat, Service.Report)         *)

\* (Variant H) T's heartbeat begins: it reads T's liveness first.
NodeStartHeartbeat ==
    /\ Transport = "heartbeat"
    /\ version = "new"
    /\ sample.phase = "idle"
    /\ sample' = [NoSample EXCEPT !.phase = "liveness", !.liveness = liveness]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   pc, brk, count, subscribed, schemaRef, removed, lastReport,
                   envVars, coordVars, cache, net>>

\* Service.Report begins: when T is STOPPING it first closes admission
\* (waiting here until the close is done), then reads the gate. Under
\* SampleBeforeClose it reads the counts first and the gate last (see
\* ServiceReadBroker and SendSample).
ServiceStartReport ==
    /\ version = "new"
    /\ sample.phase = IF Transport = "heartbeat" THEN "liveness" ELSE "idle"
    /\ ("SampleBeforeClose" \notin Bugs /\ liveness = "STOPPING") => admissionClosed
    /\ sample' = [sample EXCEPT !.phase = "reading", !.closed = admissionClosed]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   pc, brk, count, subscribed, schemaRef, removed, lastReport,
                   envVars, coordVars, cache, net>>

\* The report reads broker b's count (one atomic load) into its sum.
ServiceReadBroker(b) ==
    /\ sample.phase = "reading"
    /\ b \notin sample.read
    /\ sample' = [sample EXCEPT !.read = @ \cup {b}, !.sum = @ + count[b]]
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   pc, brk, count, subscribed, schemaRef, removed, lastReport,
                   envVars, coordVars, cache, net>>

\* A report whose every broker is read; under SampleBeforeClose it closes
\* admission only now (waiting for the close when STOPPING) and reports the
\* gate read after the sum.
SampleDone == /\ sample.phase = "reading"
              /\ sample.read = Brokers
              /\ ("SampleBeforeClose" \in Bugs /\ liveness = "STOPPING") => admissionClosed
SampleClosed == IF "SampleBeforeClose" \in Bugs THEN admissionClosed ELSE sample.closed

\* T's MaintainerManager sends a NodeHeartbeat with its epoch and liveness;
\* Variant H (new version) with the sampled count and gate. A heartbeat of
\* a legacy process, or of the logcoord transport, carries no count.
NodeSendHeartbeat ==
    IF Transport = "heartbeat" /\ version = "new"
    THEN /\ SampleDone
         /\ Send(Hb(epoch, sample.liveness, sample.sum, SampleClosed))
         /\ sample' = NoSample
         /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed,
                        admissionClosed, pc, brk, count, subscribed, schemaRef,
                        removed, lastReport, envVars, coordVars, cache>>
    ELSE /\ Send(Hb(epoch, liveness, None, FALSE))
         /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

\* (Variant L) T's event service sends its report (epoch, count, closed)
\* to the LogCoordinator; it reports again and again (every period), so a
\* cache entry that expired is refreshed. Under NoReReport it sends only a
\* report that differs from the last one it sent.
ServiceSendReport ==
    /\ Transport = "logcoord"
    /\ SampleDone
    /\ LET r == [count |-> sample.sum, closed |-> SampleClosed]
       IN  /\ "NoReReport" \in Bugs => r # lastReport
           /\ Send(Report(epoch, r.count, r.closed))
           /\ lastReport' = IF "NoReReport" \in Bugs THEN r ELSE lastReport
    /\ sample' = NoSample
    /\ UNCHANGED <<epoch, version, liveness, closing, gateClosed, admissionClosed,
                   pc, brk, count, subscribed, schemaRef, removed, envVars,
                   coordVars, cache>>

-----------------------------------------------------------------------------
(* The drained node T *)

\* T receives SetNodeLivenessRequest m. A process of the new version takes,
\* for its own epoch, the one step forward m asks for (a skip or a step
\* back changes nothing; under NodeAcceptsSkip any step forward); a legacy
\* process, or a command for another epoch, changes nothing. T replies
\* with its epoch and liveness.
NodeRecvCommand(m, keep) ==
    /\ m.kind = "cmd"
    /\ LET forward == IF "NodeAcceptsSkip" \in Bugs
                      THEN Rank(m.liveness) > Rank(liveness)
                      ELSE m.liveness = Succ(liveness)
           l == IF m.epoch = epoch /\ version = "new" /\ forward
                THEN m.liveness ELSE liveness
       IN  /\ liveness' = l
           /\ Reply(m, keep, Resp(epoch, l))
    /\ UNCHANGED <<epoch, version, brokerVars, envVars, coordVars, cache>>

\* T crashes and restarts (unplanned), possibly unseen by the coordinator.
NodeCrashRestart ==
    Restart

\* The upgrade controller restarts T: exactly the process that DrainNode
\* declared drained, or the one given the legacy hard-restart answer.
UpgradeRestart ==
    /\ drainedEpoch = epoch \/ legacyEpoch = epoch
    /\ Restart

-----------------------------------------------------------------------------
(* The coordinator and the maintainers *)

\* The coordinator reads the version of the process it tracks from the
\* membership (the node's bootstrap): until then it waits (docs/protocol.md
\* §9: a node of unknown version is neither drained nor restarted).
CoordLearnVersion ==
    /\ coordVersion = "unknown"
    /\ coordEpoch = epoch
    /\ coordVersion' = version
    /\ UNCHANGED <<nodeVars, envVars, coordEpoch, coordLiveness, coordCount,
                   work, drainedEpoch, legacyEpoch, cache, net>>

\* The coordinator asks T (at the epoch it tracks) to go DRAINING; only a
\* process known to run the new version is drained.
CoordSendDraining ==
    /\ drainedEpoch = None
    /\ legacyEpoch = None
    /\ coordVersion = "new"
    /\ coordLiveness = "ALIVE"
    /\ Send(Cmd(coordEpoch, "DRAINING"))
    /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

\* The coordinator asks T to go STOPPING once DRAINING is observed and the
\* maintainers report no work left on T (readyToStop). Under SkipDraining it
\* sends STOPPING without either.
CoordSendStopping ==
    /\ drainedEpoch = None
    /\ legacyEpoch = None
    /\ coordVersion = "new"
    /\ IF "SkipDraining" \in Bugs
       THEN coordLiveness # "STOPPING"
       ELSE coordLiveness = "DRAINING" /\ work = 0
    /\ Send(Cmd(coordEpoch, "STOPPING"))
    /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

\* The coordinator gives the legacy hard-restart answer for a process that
\* runs the legacy version (it cannot report a count, so it is not drained):
\* the upgrade controller restarts it as before the drain protocol existed.
\* Under LegacyOnUnknown also for a process of unknown version.
CoordLegacyRestart ==
    /\ drainedEpoch = None
    /\ legacyEpoch = None
    /\ IF "LegacyOnUnknown" \in Bugs
       THEN coordVersion \in {"legacy", "unknown"}
       ELSE coordVersion = "legacy"
    /\ legacyEpoch' = coordEpoch
    /\ UNCHANGED <<nodeVars, envVars, coordEpoch, coordVersion, coordLiveness,
                   coordCount, work, drainedEpoch, cache, net>>

\* The maintainers move their work off T and report progress.
MaintainerReportProgress ==
    /\ work > 0
    /\ coordLiveness = "DRAINING"
    /\ work' = work - 1
    /\ UNCHANGED <<nodeVars, envVars, coordEpoch, coordVersion, coordLiveness,
                   coordCount, drainedEpoch, legacyEpoch, cache, net>>

\* The coordinator receives T's heartbeat m.
CoordRecvHeartbeat(m, keep) ==
    /\ m.kind = "hb"
    /\ Consume(m, keep)
    /\ Observe(m)
    /\ UNCHANGED <<nodeVars, envVars, work, drainedEpoch, legacyEpoch, cache>>

\* The coordinator receives T's SetNodeLivenessResponse m (liveness only).
CoordRecvResponse(m, keep) ==
    /\ m.kind = "resp"
    /\ Consume(m, keep)
    /\ Observe(m)
    /\ UNCHANGED <<nodeVars, envVars, work, drainedEpoch, legacyEpoch, cache>>

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
    /\ UNCHANGED <<nodeVars, envVars, coordEpoch, coordVersion, coordLiveness,
                   work, drainedEpoch, legacyEpoch, cache>>

\* (Variant L) The coordinator's periodic task sends its query for T's
\* count to the LogCoordinator: after it has observed STOPPING, until it
\* has accepted a zero or answered DrainNode (Coordinator.NextQuery). The
\* answer comes later (LogCoordAnswer), whatever the coordinator did in
\* between.
CoordSendQuery ==
    /\ Transport = "logcoord"
    /\ drainedEpoch = None
    /\ legacyEpoch = None
    /\ coordLiveness = "STOPPING"
    /\ coordCount # 0
    /\ Send(Query)
    /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

\* Whether the accepted count lets DrainNode return 0. Written as one IF,
\* not as a disjunction: TLC enumerates every true disjunct of an action as
\* a separate (here identical) successor.
CountAllowsCompletion ==
    IF "IgnoreBrokerCount" \in Bugs THEN TRUE
    ELSE IF "TrustLivenessResponse" \in Bugs /\ coordCount = None THEN TRUE
    ELSE coordCount = 0

\* DrainNode returns 0: STOPPING observed, no maintainer work, and an
\* accepted count of zero, all for the epoch the coordinator tracks.
CoordCompleteDrain ==
    /\ drainedEpoch = None
    /\ legacyEpoch = None
    /\ coordLiveness = "STOPPING"
    /\ work = 0
    /\ CountAllowsCompletion
    /\ drainedEpoch' = coordEpoch
    /\ UNCHANGED <<nodeVars, envVars, coordEpoch, coordVersion, coordLiveness,
                   coordCount, work, legacyEpoch, cache, net>>

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
    /\ UNCHANGED <<nodeVars, envVars, coordVars>>

\* The LogCoordinator receives the coordinator's query m while it has an
\* entry for T: it replies with the cached report. It reads only its own
\* cache, never the coordinator's state.
LogCoordAnswer(m, keep) ==
    /\ m.kind = "query"
    /\ cache.epoch # None
    /\ Reply(m, keep, Ans(cache.epoch, cache.count, cache.closed))
    /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

\* The same query while nothing is cached for T: the answer is "unknown".
LogCoordAnswerUnknown(m, keep) ==
    /\ m.kind = "query"
    /\ cache.epoch = None
    /\ Reply(m, keep, Ans(None, None, FALSE))
    /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

\* The cached entry's TTL runs out (the LogCoordinator's expiry): the entry
\* of a restarted process, or of a live process whose refresh is late.
LogCoordExpire ==
    /\ cache.epoch # None
    /\ cache' = NoReport
    /\ UNCHANGED <<nodeVars, envVars, coordVars, net>>

-----------------------------------------------------------------------------
(* The network *)

\* A message in flight is lost.
NetLose(m) ==
    /\ net' = net \ {m}
    /\ UNCHANGED <<nodeVars, envVars, coordVars, cache>>

-----------------------------------------------------------------------------
(* Next: every disjunct is named *)

CollectorSendsRegister == \E d \in Dispatchers, b \in Brokers : CollectorSendRegister(d, b)
ServiceRecvsRegister == \E r \in regs : ServiceRecvRegister(r)
NetLosesRegister == \E r \in regs : NetLoseRegister(r)
CollectorRemoves == \E d \in Dispatchers : CollectorRemove(d)
BrokerSteps(d) == \/ BrokerAdmit(d)
                  \/ BrokerReleaseOld(d)
                  \/ BrokerSubscribe(d)
                  \/ BrokerSubscribeRefused(d)
                  \/ BrokerRegisterTable(d)
                  \/ BrokerRegisterTableFails(d)
                  \/ BrokerUnsubscribe(d)
                  \/ BrokerRollback(d)
                  \/ BrokerRemoveFinish(d)
BrokerStepsAny == \E d \in Dispatchers : BrokerSteps(d)
BrokerCleanups == \E d \in Dispatchers : BrokerInactivityCleanup(d)
ServiceClosesBroker == \E b \in Brokers : ServiceCloseBroker(b)
ServiceReadsBroker == \E b \in Brokers : ServiceReadBroker(b)
NodeRecvsCommand == \E m \in net : \E keep \in BOOLEAN : NodeRecvCommand(m, keep)
CoordRecvsHeartbeat == \E m \in net : \E keep \in BOOLEAN : CoordRecvHeartbeat(m, keep)
CoordRecvsResponse == \E m \in net : \E keep \in BOOLEAN : CoordRecvResponse(m, keep)
CoordRecvsAnswer == \E m \in net : \E keep \in BOOLEAN : CoordRecvAnswer(m, keep)
LogCoordRecvsReport == \E m \in net : \E keep \in BOOLEAN : LogCoordRecvReport(m, keep)
LogCoordAnswers == \E m \in net : \E keep \in BOOLEAN : LogCoordAnswer(m, keep)
LogCoordAnswersUnknown == \E m \in net : \E keep \in BOOLEAN : LogCoordAnswerUnknown(m, keep)
NetLoses == \E m \in net : NetLose(m)

\* The same receives, restricted to taking the message off the network
\* (keep = FALSE): the fair part of each receive. Answers are taken under
\* strong fairness, and known answers under strong fairness of their own
\* (a fair-loss link delivers a message that is sent again and again, even
\* while unknown answers are delivered in between).
NodeTakesCommand == \E m \in net : NodeRecvCommand(m, FALSE)
CoordTakesObservation == \E m \in net : CoordRecvHeartbeat(m, FALSE) \/ CoordRecvResponse(m, FALSE)
CoordTakesAnswer == \E m \in net : CoordRecvAnswer(m, FALSE)
CoordTakesKnownAnswer == \E m \in net : m.epoch # None /\ CoordRecvAnswer(m, FALSE)
LogCoordTakesReport == \E m \in net : LogCoordRecvReport(m, FALSE)
LogCoordTakesQuery == \E m \in net : LogCoordAnswer(m, FALSE) \/ LogCoordAnswerUnknown(m, FALSE)
LogCoordTakesQueryCached == \E m \in net : LogCoordAnswer(m, FALSE)

\* The coordinator's query sent while the LogCoordinator has an entry for
\* T: the fair part of CoordSendQuery. With LogCoordTakesQueryCached it is
\* the timing assumption "query period < TTL" (tla/README.md, Findings): an
\* entry that keeps coming back is met by a query, and a query that meets
\* an entry is answered from it. A query sent while nothing is cached may
\* be answered "unknown" and is owed nothing.
CoordSendQueryCached == cache.epoch # None /\ CoordSendQuery

\* The steps that fairness groups: each group's steps are taken one after
\* another by one goroutine (the request loop, CloseAdmission, the
\* reporter, the coordinator), so fairness on the group is fairness on the
\* goroutine.
ServiceCloses == ServiceStartClose \/ ServiceClosesBroker \/ ServiceFinishClose
ReportSteps == NodeStartHeartbeat \/ ServiceStartReport \/ ServiceReadsBroker \/ ServiceSendReport
CoordSteps == CoordLearnVersion \/ MaintainerReportProgress
\* The coordinator's periodic task: its commands and, once STOPPING is
\* observed, its query (never enabled together: the commands need
\* coordLiveness # STOPPING).
CoordSends == CoordSendDraining \/ CoordSendStopping \/ CoordSendQueryCached
CoordAnswersDrainNode == CoordCompleteDrain \/ CoordLegacyRestart

Next ==
    \/ CollectorSendsRegister
    \/ ServiceRecvsRegister
    \/ NetLosesRegister
    \/ CollectorRemoves
    \/ BrokerStepsAny
    \/ BrokerCleanups
    \/ ServiceStartClose
    \/ ServiceClosesBroker
    \/ ServiceFinishClose
    \/ NodeStartHeartbeat
    \/ ServiceStartReport
    \/ ServiceReadsBroker
    \/ NodeSendHeartbeat
    \/ ServiceSendReport
    \/ NodeRecvsCommand
    \/ NodeCrashRestart
    \/ UpgradeRestart
    \/ CoordLearnVersion
    \/ CoordSendDraining
    \/ CoordSendStopping
    \/ CoordSendQuery
    \/ CoordLegacyRestart
    \/ MaintainerReportProgress
    \/ CoordRecvsHeartbeat
    \/ CoordRecvsResponse
    \/ CoordRecvsAnswer
    \/ CoordCompleteDrain
    \/ LogCoordRecvsReport
    \/ LogCoordAnswers
    \/ LogCoordAnswersUnknown
    \/ LogCoordExpire
    \/ NetLoses

\* Fairness for DrainCompletes. Senders that the network bound can block,
\* the deliveries and the coordinator's answers are strongly fair;
\* internal broker and service steps, the coordinator's own steps and the
\* collectors' removals are weakly fair. Registering, restarts, store
\* failures, expiry, loss and duplication are not fair. The coordinator's
\* query is strongly fair while an entry is cached, and the answers to a
\* query are strongly fair, those from a cached entry with a fairness of
\* their own (as the coordinator's known answers): an entry that keeps
\* coming back (T reports every period, faster than the TTL) is
\* eventually met by a query and answered from, however often it expires
\* and however many queries meet no entry and are answered "unknown";
\* this is the timing assumption "query period < TTL" that live expiry
\* needs (tla/README.md, Findings).
\*
\* The conjuncts are few on purpose: TLC checks liveness once per
\* "possible error model", and their number doubles with every fairness
\* conjunct. Steps that one goroutine takes one after another share a
\* conjunct (the request loop's BrokerStepsAny: at most one dispatcher is
\* between steps; the close; the report; the coordinator's own steps; its
\* commands and query; its answer to DrainNode).
Fairness ==
    /\ WF_vars(BrokerStepsAny)
    /\ WF_vars(CollectorRemoves)
    /\ WF_vars(ServiceCloses)
    /\ WF_vars(CoordSteps)
    /\ SF_vars(ReportSteps)
    /\ SF_vars(NodeSendHeartbeat)
    /\ SF_vars(CoordSends)
    /\ SF_vars(CoordAnswersDrainNode)
    /\ SF_vars(LogCoordTakesQuery)
    /\ SF_vars(LogCoordTakesQueryCached)
    /\ SF_vars(NodeTakesCommand)
    /\ SF_vars(CoordTakesObservation)
    /\ SF_vars(CoordTakesAnswer)
    /\ SF_vars(CoordTakesKnownAnswer)
    /\ SF_vars(LogCoordTakesReport)

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Safety invariants *)

\* D5, part 1: while the process declared drained lives, admission is
\* closed, at the service and at every broker.
DrainSafetyClosed ==
    drainedEpoch = epoch => admissionClosed /\ \A b \in Brokers : gateClosed[b]

\* D5, part 2: while the process declared drained lives, its brokers have
\* no registered, admitted or half-removed dispatcher and no store residue
\* (a REGISTER past the service's check but not yet at the broker's CAS
\* holds nothing and will be refused).
DrainSafetyEmpty ==
    drainedEpoch = epoch =>
        \A d \in Dispatchers : /\ pc[d] \in {"idle", "gated"}
                               /\ ~subscribed[d]
                               /\ ~schemaRef[d]

\* D5: no premature restart.
DrainSafety == DrainSafetyClosed /\ DrainSafetyEmpty

\* R1/D6: outside an add or remove step each broker's count is the number
\* of dispatchers registered there (table triggers included).
CountAccuracy ==
    ~Busy => \A b \in Brokers : count[b] = Cardinality(RegisteredAt(b))

\* R2: while a dispatcher holds a subscription or a schema reference, is
\* registered, or is admitted and between steps at broker b, b's count is
\* at least 1, so every report counts it.
NoHiddenRegistration ==
    \A d \in Dispatchers :
        (\/ pc[d] \notin {"idle", "gated"}
         \/ subscribed[d]
         \/ schemaRef[d]) => brk[d] # NoBroker /\ count[brk[d]] >= 1

\* R3: an idle dispatcher (never added, removed, or after a failed add)
\* has no subscription, no schema reference and is marked removed.
NoTraceWhenIdle ==
    \A d \in Dispatchers :
        pc[d] = "idle" => ~subscribed[d] /\ ~schemaRef[d] /\ removed[d]

\* R4: a live notifier (a subscription whose stat is not marked removed)
\* exists only for a dispatcher subscribed and registering, registered, or
\* whose old registration is being replaced.
NoLiveNotifierWhenUnknown ==
    \A d \in Dispatchers :
        subscribed[d] /\ ~removed[d] =>
            pc[d] \in {"subscribed", "registered", "regated", "replacing"}

FailureLeavesNoTrace == NoTraceWhenIdle /\ NoLiveNotifierWhenUnknown

\* D2/D8: the coordinator never believes more of T's current process than
\* is true, and a count it holds for T's current process was sampled with
\* admission closed and bounds the brokers' total from above.
NoStaleObservation ==
    /\ coordEpoch = epoch => Rank(coordLiveness) <= Rank(liveness)
    /\ coordEpoch = epoch /\ coordCount # None =>
           admissionClosed /\ TotalCount <= coordCount

\* C3: T goes STOPPING only after the maintainers moved their work off it.
StopAfterWorkMoved ==
    liveness = "STOPPING" /\ coordEpoch = epoch => work = 0

\* Mixed versions (docs/protocol.md §9): no drain is declared through a
\* process that cannot report a count, and only a legacy process is given
\* the legacy hard restart.
VersionSafety ==
    /\ drainedEpoch = epoch => version = "new"
    /\ legacyEpoch = epoch => version = "legacy"

-----------------------------------------------------------------------------
(* Action properties *)

\* D7/R8: once broker b's gate bit is set, within the process b admits no
\* registration and its count never rises: this is what makes a sum read
\* one broker at a time after the close exact or high.
NoAdmissionAfterCloseStep ==
    epoch' = epoch =>
        \A b \in Brokers :
            gateClosed[b] =>
                /\ count'[b] <= count[b]
                /\ \A d \in Dispatchers :
                       pc[d] \in {"gated", "regated"} /\ brk[d] = b =>
                           pc'[d] \in {"gated", "regated", "idle", "registered"}

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

\* Collectors send at most MaxReg REGISTERs, so they stop registering in
\* every behaviour; once they have removed their dispatchers, the drain is
\* eventually reported complete (or, for a legacy process, answered with
\* the legacy hard restart). Written as P ~> Q with P = TRUE.
DrainReported == drainedEpoch # None \/ legacyEpoch # None

DrainCompletes == TRUE ~> DrainReported

=============================================================================
