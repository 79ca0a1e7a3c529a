----------------------- MODULE TraceDrainRegistration -----------------------
(***************************************************************************)
(* Trace validation of DrainRegistration under TLC, in the style of        *)
(* etcd-raft's Traceetcdraft.tla: TLC reads an NDJSON trace of the         *)
(* implementation (docs/trace.md, schema version 1) and searches for a     *)
(* behaviour of DrainRegistration in which every line, in order, is a step *)
(* of the action it names, with its parameters, whose successor agrees     *)
(* with every variable the line observes.                                  *)
(*                                                                         *)
(* The environment's steps that no process sees (a lost message, a      *)
(* duplicate) are decided as `checker trace` (internal/tracecheck) decides *)
(* them, from the trace's future: a receive keeps its message exactly when *)
(* a later line receives it again before any line sends it again, and a   *)
(* message sent is lost at once when no later line receives it before it  *)
(* is sent again (docs/trace.md). With the environment variable            *)
(* TRACE_FREE_ENV set, they are free instead: any message may be lost      *)
(* between two lines and any receive may keep its message; that search is *)
(* exponential in the messages in flight, and it accepts the same traces  *)
(* (the parity run in tla/README.md), which is the evidence that the rule  *)
(* loses no behaviour.                                                     *)
(*                                                                         *)
(* The constants come from the trace's header, which                     *)
(* TraceDrainRegistration.cfg substitutes for them; the collectors'        *)
(* REGISTER budget MaxReg becomes the                                      *)
(* trace's length, so that it never bounds a trace (the Go checker resets  *)
(* registrations instead). Run, from tla/:                                 *)
(*                                                                         *)
(*   TRACE=/abs/path/trace.ndjson java -XX:+UseParallelGC \                *)
(*     -cp $TLA2TOOLS:$TLA_COMMUNITY_MODULES tlc2.TLC -workers 1 \         *)
(*     -config TraceDrainRegistration.cfg TraceDrainRegistration.tla       *)
(*                                                                         *)
(* TLC prints "TRACE file accepted n" or "TRACE file rejected n": n is the *)
(* number of action lines of the longest prefix some behaviour explains.  *)
(* TRACES=/abs/path/manifest.ndjson instead checks several traces in one  *)
(* run (one line {"file": "/abs/path"} per trace; their headers must be   *)
(* equal): each initial state belongs to one trace.                       *)
(***************************************************************************)
EXTENDS DrainRegistration, Sequences, TLC, Json, IOUtils

\* The trace files: TRACE, or the files the manifest TRACES lists.
Files ==
    IF "TRACES" \in DOMAIN IOEnv
    THEN LET man == ndJsonDeserialize(IOEnv.TRACES)
         IN  [t \in 1..Len(man) |-> man[t].file]
    ELSE <<IF "TRACE" \in DOMAIN IOEnv THEN IOEnv.TRACE ELSE "trace.ndjson">>
NumTraces == Len(Files)

Raws == TLCEval([t \in 1..NumTraces |-> ndJsonDeserialize(Files[t])])
Header == Raws[1][1]
ASSUME Header.drainproof_trace = 1    \* the schema version
ASSUME \A t \in 1..NumTraces : Raws[t][1].model = Header.model

\* The action lines of each trace.
Logs == TLCEval([t \in 1..NumTraces |-> [i \in 1..Len(Raws[t]) - 1 |-> Raws[t][i + 1]]])

ToSet(s) == {s[i] : i \in DOMAIN s}
MaxLen == LET lens == {Len(Logs[t]) : t \in 1..NumTraces}
          IN  CHOOSE n \in lens : \A k \in lens : k <= n

\* The constants, from the header.
TraceDispatchers == ToSet(Header.model.Dispatchers)
TraceTableTriggers == ToSet(Header.model.TableTriggers)
TraceMaxEpoch == Header.model.MaxEpoch
TraceMaxReg == MaxLen
TraceMaxMsgs == Header.model.MaxMsgs
TraceTransport == Header.model.Transport
TraceBugs == ToSet(Header.model.Bugs)

FreeEnv == "TRACE_FREE_ENV" \in DOMAIN IOEnv

\* "No message": a record no message equals.
NoMsg == [kind |-> "none"]

VARIABLES
    tid,      \* the trace this behaviour explains
    l,        \* the next line of that trace to explain
    pending   \* a message the last line sent that is lost at once, or NoMsg

traceVars == <<vars, tid, l, pending>>

Has(r, f) == f \in DOMAIN r
NoFields == [f \in {} |-> 0]
P(t, i) == IF Has(Logs[t][i], "params") THEN Logs[t][i].params ELSE NoFields

logline == Logs[tid][l]
Params == P(tid, l)
Obs == IF Has(logline, "vars") THEN logline.vars ELSE NoFields

\* The actions by the shape of their parameters.
IndexActions == {"CollectorRegister", "CollectorRemove", "BrokerSubscribe",
                 "BrokerSubscribeRefused", "BrokerRegisterTable",
                 "BrokerRegisterTableFails", "BrokerRemoveFinish",
                 "BrokerInactivityCleanup"}
RecvActions == {"NodeRecvCommand", "CoordRecvHeartbeat", "CoordRecvResponse",
                "CoordRecvAnswer", "LogCoordRecvReport"}

-----------------------------------------------------------------------------
(* The lookahead: the environment's steps, decided from the future.         *)

\* The message line i of trace t receives, and the one it sends, or NoMsg.
Received(t, i) == IF Logs[t][i].action \in RecvActions THEN P(t, i).m ELSE NoMsg
SentBy(t, i) ==
    IF Has(P(t, i), "reply") THEN P(t, i).reply
    ELSE IF Logs[t][i].action \notin RecvActions /\ Has(P(t, i), "m") THEN P(t, i).m
    ELSE NoMsg

\* The first line of trace t from j on that receives or sends m receives it.
RECURSIVE ReceivedNext(_, _, _)
ReceivedNext(t, m, j) ==
    IF j > Len(Logs[t]) THEN FALSE
    ELSE IF Received(t, j) = m THEN TRUE
    ELSE IF SentBy(t, j) = m THEN FALSE
    ELSE ReceivedNext(t, m, j + 1)

KeepAt == TLCEval([t \in 1..NumTraces |-> [i \in 1..Len(Logs[t]) |->
             Received(t, i) # NoMsg /\ ReceivedNext(t, Received(t, i), i + 1)]])
LoseAt == TLCEval([t \in 1..NumTraces |-> [i \in 1..Len(Logs[t]) |->
             SentBy(t, i) # NoMsg /\ ~ReceivedNext(t, SentBy(t, i), i + 1)]])

-----------------------------------------------------------------------------

\* The dispatchers the line's parameter d allows, and its keep.
Ds == IF Has(Params, "d") THEN {Params.d} ELSE Dispatchers
Keeps == IF Has(Params, "keep") THEN {Params.keep}
         ELSE IF FreeEnv THEN BOOLEAN ELSE {KeepAt[tid][l]}
\* The observable variables after the step; functions and records are
\* compared on the keys the line gives.
Post == [epoch |-> epoch', liveness |-> liveness', admissionClosed |-> admissionClosed',
         pc |-> pc', count |-> count', subscribed |-> subscribed',
         schemaRef |-> schemaRef', removed |-> removed', coordEpoch |-> coordEpoch',
         coordLiveness |-> coordLiveness', coordCount |-> coordCount', work |-> work',
         drainedEpoch |-> drainedEpoch', cache |-> cache']
Composite == {"pc", "subscribed", "schemaRef", "removed", "cache"}

Agrees ==
    \A v \in DOMAIN Obs :
        IF v \in Composite THEN \A k \in DOMAIN Obs[v] : Obs[v][k] = Post[v][k]
                           ELSE Obs[v] = Post[v]

IndexAction(a, d) ==
    CASE a = "CollectorRegister"        -> CollectorRegister(d)
      [] a = "CollectorRemove"          -> CollectorRemove(d)
      [] a = "BrokerSubscribe"          -> BrokerSubscribe(d)
      [] a = "BrokerSubscribeRefused"   -> BrokerSubscribeRefused(d)
      [] a = "BrokerRegisterTable"      -> BrokerRegisterTable(d)
      [] a = "BrokerRegisterTableFails" -> BrokerRegisterTableFails(d)
      [] a = "BrokerRemoveFinish"       -> BrokerRemoveFinish(d)
      [] a = "BrokerInactivityCleanup"  -> BrokerInactivityCleanup(d)

RecvAction(a, m, keep) ==
    CASE a = "NodeRecvCommand"    -> NodeRecvCommand(m, keep)
      [] a = "CoordRecvHeartbeat" -> CoordRecvHeartbeat(m, keep)
      [] a = "CoordRecvResponse"  -> CoordRecvResponse(m, keep)
      [] a = "CoordRecvAnswer"    -> CoordRecvAnswer(m, keep)
      [] a = "LogCoordRecvReport" -> LogCoordRecvReport(m, keep)

NullaryAction(a) ==
    CASE a = "NodeSendHeartbeat"        -> NodeSendHeartbeat
      [] a = "ServiceSendReport"        -> ServiceSendReport
      [] a = "NodeCrashRestart"         -> NodeCrashRestart
      [] a = "UpgradeRestart"           -> UpgradeRestart
      [] a = "CoordSendDraining"        -> CoordSendDraining
      [] a = "CoordSendStopping"        -> CoordSendStopping
      [] a = "MaintainerReportProgress" -> MaintainerReportProgress
      [] a = "CoordCompleteDrain"       -> CoordCompleteDrain
      [] a = "LogCoordAnswer"           -> LogCoordAnswer
      [] a = "LogCoordExpire"           -> LogCoordExpire

\* A send names the message it sent (m), or sends none; a receive's reply
\* is in flight after it.
SentAsSaid ==
    IF Has(Params, "m") THEN Params.m \in net' \ net ELSE net' \subseteq net
ReplyAsSaid ==
    Has(Params, "reply") => Params.reply \in net'

\* The line's step.
TraceStep ==
    LET a == logline.action IN
    /\ \/ a \in IndexActions /\ \E d \in Ds : IndexAction(a, d)
       \/ /\ a \in RecvActions
          /\ Params.m \in net
          /\ \E keep \in Keeps : RecvAction(a, Params.m, keep)
          /\ ReplyAsSaid
       \/ /\ a \notin IndexActions \cup RecvActions
          /\ NullaryAction(a)
          /\ SentAsSaid
    /\ Agrees
    /\ l' = l + 1
    /\ pending' = IF ~FreeEnv /\ LoseAt[tid][l] THEN SentBy(tid, l) ELSE NoMsg
    /\ UNCHANGED tid

\* The lookahead's loss of the message the last line sent.
TraceLose ==
    /\ NetLose(pending)
    /\ pending' = NoMsg
    /\ UNCHANGED <<tid, l>>

\* TRACE_FREE_ENV: any message is lost between two lines.
TraceEnv ==
    /\ FreeEnv
    /\ \E m \in net : NetLose(m)
    /\ UNCHANGED <<tid, l, pending>>

\* TLC register t holds the furthest line reached in trace t.
TraceInit ==
    /\ Init
    /\ tid \in 1..NumTraces
    /\ l = 1
    /\ pending = NoMsg
    /\ TLCSet(tid, 1)

TraceNext ==
    /\ \/ pending # NoMsg /\ TraceLose
       \/ /\ pending = NoMsg
          /\ l <= Len(Logs[tid])
          /\ \/ TraceStep
             \/ TraceEnv
    /\ TLCSet(tid, IF l' > TLCGet(tid) THEN l' ELSE TLCGet(tid))

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

\* After the search: the longest prefix of the trace some behaviour explains.
TraceAccepted ==
    \A t \in 1..NumTraces :
        PrintT("TRACE " \o Files[t] \o " " \o
               (IF TLCGet(t) > Len(Logs[t]) THEN "accepted" ELSE "rejected") \o
               " " \o ToString(TLCGet(t) - 1))

=============================================================================
