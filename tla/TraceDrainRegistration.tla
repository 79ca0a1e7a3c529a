----------------------- MODULE TraceDrainRegistration -----------------------
(***************************************************************************)
(* Trace validation of DrainRegistration under TLC, in the style of        *)
(* etcd-raft's Traceetcdraft.tla: TLC reads an NDJSON trace of the         *)
(* implementation (docs/trace.md, schema versions 1 and 2) and searches for a *)
(* behaviour of DrainRegistration in which every line, in order, is a step *)
(* of the action it names, with its parameters, whose successor agrees     *)
(* with every variable the line observes.                                  *)
(*                                                                         *)
(* The environment's steps that no process sees (a lost message, a      *)
(* duplicate) are decided as `checker trace` (harness/tracecheck) decides *)
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
(*   TRACE=/abs/path/trace.ndjson java -XX:+UseParallelGC -Xss512m \        *)
(*     -cp $TLA2TOOLS:$TLA_COMMUNITY_MODULES tlc2.TLC -workers 1 \         *)
(*     -config TraceDrainRegistration.cfg TraceDrainRegistration.tla       *)
(*                                                                         *)
(* TLC prints "TRACE file accepted n" or "TRACE file rejected n": n is the *)
(* number of action lines of the longest prefix some behaviour explains.  *)
(* TRACES=/abs/path/manifest.ndjson instead checks several traces in one  *)
(* run (one line {"file": "/abs/path"} per trace; their headers must be   *)
(* equal): each initial state belongs to one trace.                       *)
(*                                                                         *)
(* A multi-process run is checked merged (checker trace --merged FILE):    *)
(* its lines carry their process and clock (p, c, from, after), which this *)
(* module ignores; it checks the model's steps in the merged order, and    *)
(* `checker trace` alone checks that the order respects happens-before.   *)
(*                                                                         *)
(* A full run's trace (header "mapping": "sessions") is read through the   *)
(* refinement mapping of docs/trace.md, as `checker trace` reads it        *)
(* (Sessions, Stutter, MayStutter and TraceCoordRejoin below).             *)
(***************************************************************************)
EXTENDS DrainRegistration, Sequences, TLC, Json, IOUtils

\* A function of 1..n as a sequence whose elements are evaluated once: a
\* function constructor is lazy, and TLC would evaluate its body (read a
\* file, say) at every application.
Eager(f) == <<>> \o f

Has(r, f) == f \in DOMAIN r
NoFields == [f \in {} |-> 0]
ToSet(s) == {s[i] : i \in DOMAIN s}

\* "No message": a record no message equals.
NoMsg == [kind |-> "none"]

\* The actions by the shape of their parameters.
DispActions == {"BrokerAdmit", "BrokerReleaseOld", "BrokerSubscribe",
                "BrokerSubscribeRefused", "BrokerRegisterTable",
                "BrokerRegisterTableFails", "BrokerUnsubscribe", "BrokerRollback",
                "CollectorRemove", "BrokerRemoveFinish", "BrokerInactivityCleanup"}
BrokerActions == {"ServiceCloseBroker", "ServiceReadBroker"}
RegActions == {"CollectorSendRegister", "ServiceRecvRegister"}
RecvActions == {"NodeRecvCommand", "CoordRecvHeartbeat", "CoordRecvResponse",
                "CoordRecvAnswer", "LogCoordRecvReport", "LogCoordAnswer",
                "LogCoordAnswerUnknown"}
RestartActions == {"NodeCrashRestart", "UpgradeRestart"}
\* The refinement mapping's own step (a full run's, below).
RefineActions == {"CoordRejoin"}

-----------------------------------------------------------------------------
(* The lookahead: the environment's steps, decided from the future. These  *)
(* operators take a trace's lines (lg), not a trace's number, so that the   *)
(* traces are read once, in TraceData.                                      *)

LineParams(line) == IF Has(line, "params") THEN line.params ELSE NoFields

\* The REGISTER a line names.
Reg(p) == [disp |-> p.d, broker |-> p.b]

\* The message (or REGISTER) line i of lg receives, and the one it sends,
\* or NoMsg.
Received(lg, i) ==
    CASE lg[i].action \in RecvActions             -> LineParams(lg[i]).m
      [] lg[i].action = "ServiceRecvRegister"      -> Reg(LineParams(lg[i]))
      [] OTHER                                      -> NoMsg
SentBy(lg, i) ==
    LET p == LineParams(lg[i]) IN
    CASE lg[i].action = "CollectorSendRegister"     -> Reg(p)
      [] Has(p, "reply")                            -> p.reply
      [] lg[i].action \notin RecvActions /\ Has(p, "m") -> p.m
      [] OTHER                                      -> NoMsg

\* The first line from j on that receives or sends m receives it; rs and
\* ss are a trace's Received and SentBy, line by line (computed once: the
\* search from every line would otherwise rebuild them at every step).
RECURSIVE ReceivedNext(_, _, _, _)
ReceivedNext(rs, ss, m, j) ==
    IF j > Len(rs) THEN FALSE
    ELSE IF rs[j] = m THEN TRUE
    ELSE IF ss[j] = m THEN FALSE
    ELSE ReceivedNext(rs, ss, m, j + 1)

-----------------------------------------------------------------------------

\* Everything read from the files, in one definition (TLC evaluates each
\* definition once, but in no set order, so one that used another would
\* read the files again): the trace files (TRACE, or the files the
\* manifest TRACES lists), their headers, their action lines, and per line
\* the lookahead's keep and loss.
TraceData ==
    LET files == IF "TRACES" \in DOMAIN IOEnv
                 THEN LET man == ndJsonDeserialize(IOEnv.TRACES)
                      IN  Eager([t \in 1..Len(man) |-> man[t].file])
                 ELSE <<IF "TRACE" \in DOMAIN IOEnv THEN IOEnv.TRACE ELSE "trace.ndjson">>
        raws == Eager([t \in 1..Len(files) |-> ndJsonDeserialize(files[t])])
        logs == Eager([t \in 1..Len(files) |-> Tail(raws[t])])
        rcv == Eager([t \in 1..Len(files) |-> LET lg == logs[t] IN Eager([i \in 1..Len(lg) |-> Received(lg, i)])])
        snt == Eager([t \in 1..Len(files) |-> LET lg == logs[t] IN Eager([i \in 1..Len(lg) |-> SentBy(lg, i)])])
        keep == Eager([t \in 1..Len(files) |-> LET rs == rcv[t] IN Eager([i \in 1..Len(rs) |->
                    rs[i] # NoMsg /\ ReceivedNext(rs, snt[t], rs[i], i + 1)])])
        lose == Eager([t \in 1..Len(files) |-> LET ss == snt[t] IN Eager([i \in 1..Len(ss) |->
                    ss[i] # NoMsg /\ ~ReceivedNext(rcv[t], ss, ss[i], i + 1)])])
    IN  [files |-> files, headers |-> Eager([t \in 1..Len(files) |-> raws[t][1]]),
         logs |-> logs, keep |-> keep, lose |-> lose]

Files == TraceData.files
NumTraces == Len(Files)
Logs == TraceData.logs
KeepAt == TraceData.keep
LoseAt == TraceData.lose
Header == TraceData.headers[1]
ASSUME LET hs == TraceData.headers
       IN  /\ hs[1].drainproof_trace \in {1, 2}    \* the schema version
           /\ \A t \in 1..Len(hs) : hs[t].model = hs[1].model

MaxLen == LET lens == {Len(Logs[t]) : t \in 1..NumTraces}
          IN  CHOOSE n \in lens : \A k \in lens : k <= n

\* The constants, from the header.
TraceDispatchers == ToSet(Header.model.Dispatchers)
TraceTableTriggers == ToSet(Header.model.TableTriggers)
TraceBrokers == ToSet(Header.model.Brokers)
TraceVersions == ToSet(Header.model.Versions)
TraceMaxEpoch == Header.model.MaxEpoch
TraceMaxReg == MaxLen
TraceMaxMsgs == Header.model.MaxMsgs
TraceTransport == Header.model.Transport
TraceBugs == ToSet(Header.model.Bugs)

FreeEnv == "TRACE_FREE_ENV" \in DOMAIN IOEnv

VARIABLES
    tid,      \* the trace this behaviour explains
    l,        \* the next line of that trace to explain
    pending   \* a message the last line sent that is lost at once, or NoMsg

traceVars == <<vars, tid, l, pending>>

\* The refinement mapping of a full run (header "mapping": "sessions";
\* docs/trace.md, "Every run: the refinement mapping"), read as
\* harness/tracecheck/refine.go reads it: the coordinator's observed work w
\* is the model's 0 if w = 0, else 1 (None, no session yet, included); a
\* maintainers' report that leaves work at 1 is a stutter; an unknown
\* answer may be a stutter (a stale LogCoordinator's, which no line sent);
\* CoordRejoin starts a new session at the epoch the line observes.
Sessions == LET h == TraceData.headers[tid] IN Has(h, "mapping") /\ h.mapping = "sessions"
ASSUME \A t \in 1..NumTraces :
           LET h == TraceData.headers[t] IN Has(h, "mapping") => h.mapping \in {"", "sessions"}
MapWork(w) == IF w = 0 THEN 0 ELSE 1

logline == Logs[tid][l]
Params == LineParams(logline)
RawObs == IF Has(logline, "vars") THEN logline.vars ELSE NoFields
Obs == IF Sessions /\ Has(RawObs, "work")
       THEN [v \in DOMAIN RawObs |-> IF v = "work" THEN MapWork(RawObs.work) ELSE RawObs[v]]
       ELSE RawObs

\* The dispatchers, brokers and versions the line's parameters allow, and
\* its keep.
Ds == IF Has(Params, "d") THEN {Params.d} ELSE Dispatchers
Bs == IF Has(Params, "b") THEN {Params.b} ELSE Brokers
VersionAsSaid == Has(Params, "v") => version' = Params.v
Keeps == IF Has(Params, "keep") THEN {Params.keep}
         ELSE IF FreeEnv THEN BOOLEAN ELSE {KeepAt[tid][l]}
\* The observable variables after the step; functions and records are
\* compared on the keys the line gives.
Post == [epoch |-> epoch', version |-> version', liveness |-> liveness', closing |-> closing',
         gateClosed |-> gateClosed', admissionClosed |-> admissionClosed', pc |-> pc', brk |-> brk',
         count |-> count', subscribed |-> subscribed', schemaRef |-> schemaRef', removed |-> removed',
         sample |-> sample', lastReport |-> lastReport', coordEpoch |-> coordEpoch',
         coordVersion |-> coordVersion', coordLiveness |-> coordLiveness', coordCount |-> coordCount',
         work |-> work', drainedEpoch |-> drainedEpoch', legacyEpoch |-> legacyEpoch', cache |-> cache']
Composite == {"gateClosed", "pc", "brk", "count", "subscribed", "schemaRef", "removed", "sample",
              "lastReport", "cache"}

\* A trace spells a set (sample.read) as an array.
Value(v, k, x) == IF v = "sample" /\ k = "read" THEN ToSet(x) ELSE x

Agrees ==
    \A v \in DOMAIN Obs :
        IF v \in Composite THEN \A k \in DOMAIN Obs[v] : Value(v, k, Obs[v][k]) = Post[v][k]
                           ELSE Obs[v] = Post[v]

DispAction(a, d) ==
    CASE a = "BrokerAdmit"              -> BrokerAdmit(d)
      [] a = "BrokerReleaseOld"         -> BrokerReleaseOld(d)
      [] a = "BrokerSubscribe"          -> BrokerSubscribe(d)
      [] a = "BrokerSubscribeRefused"   -> BrokerSubscribeRefused(d)
      [] a = "BrokerRegisterTable"      -> BrokerRegisterTable(d)
      [] a = "BrokerRegisterTableFails" -> BrokerRegisterTableFails(d)
      [] a = "BrokerUnsubscribe"        -> BrokerUnsubscribe(d)
      [] a = "BrokerRollback"           -> BrokerRollback(d)
      [] a = "CollectorRemove"          -> CollectorRemove(d)
      [] a = "BrokerRemoveFinish"       -> BrokerRemoveFinish(d)
      [] a = "BrokerInactivityCleanup"  -> BrokerInactivityCleanup(d)

BrokerAction(a, b) ==
    CASE a = "ServiceCloseBroker" -> ServiceCloseBroker(b)
      [] a = "ServiceReadBroker"  -> ServiceReadBroker(b)

\* (Next takes a REGISTER in flight: \E r \in regs : ServiceRecvRegister(r).)
RegAction(a, d, b) ==
    CASE a = "CollectorSendRegister" -> CollectorSendRegister(d, b)
      [] a = "ServiceRecvRegister"   -> /\ [disp |-> d, broker |-> b] \in regs
                                        /\ ServiceRecvRegister([disp |-> d, broker |-> b])

RecvAction(a, m, keep) ==
    CASE a = "NodeRecvCommand"    -> NodeRecvCommand(m, keep)
      [] a = "CoordRecvHeartbeat" -> CoordRecvHeartbeat(m, keep)
      [] a = "CoordRecvResponse"  -> CoordRecvResponse(m, keep)
      [] a = "CoordRecvAnswer"    -> CoordRecvAnswer(m, keep)
      [] a = "LogCoordRecvReport" -> LogCoordRecvReport(m, keep)
      [] a = "LogCoordAnswer"     -> LogCoordAnswer(m, keep)
      [] a = "LogCoordAnswerUnknown" -> LogCoordAnswerUnknown(m, keep)

NullaryAction(a) ==
    CASE a = "ServiceStartClose"        -> ServiceStartClose
      [] a = "ServiceFinishClose"       -> ServiceFinishClose
      [] a = "NodeStartHeartbeat"       -> NodeStartHeartbeat
      [] a = "ServiceStartReport"       -> ServiceStartReport
      [] a = "NodeSendHeartbeat"        -> NodeSendHeartbeat
      [] a = "ServiceSendReport"        -> ServiceSendReport
      [] a = "NodeCrashRestart"         -> NodeCrashRestart
      [] a = "UpgradeRestart"           -> UpgradeRestart
      [] a = "CoordLearnVersion"        -> CoordLearnVersion
      [] a = "CoordSendDraining"        -> CoordSendDraining
      [] a = "CoordSendStopping"        -> CoordSendStopping
      [] a = "CoordSendQuery"           -> CoordSendQuery
      [] a = "CoordLegacyRestart"       -> CoordLegacyRestart
      [] a = "MaintainerReportProgress" -> MaintainerReportProgress
      [] a = "CoordCompleteDrain"       -> CoordCompleteDrain
      [] a = "LogCoordExpire"           -> LogCoordExpire

\* A send names the message it sent (m), or sends none; a receive's reply
\* is in flight after it and is the only message the receive added (an
\* older message in flight must not pass for the reply).
SentAsSaid ==
    IF Has(Params, "m") THEN Params.m \in net' \ net ELSE net' \subseteq net
ReplyAsSaid ==
    Has(Params, "reply") =>
        /\ Params.reply \in net'
        /\ net' \ net \subseteq {Params.reply}

\* The mapping's stutters: a line that is (Stutter) or may be
\* (MayStutter) a step that changes no variable of the model.
Stutter == /\ Sessions
           /\ logline.action = "MaintainerReportProgress"
           /\ Has(Obs, "work") /\ Obs.work = 1
MayStutter == /\ Sessions
              /\ logline.action = "CoordRecvAnswer"
              /\ Has(Params, "m") /\ Params.m.epoch = None

\* CoordRejoin: after its restart T rejoins at epoch e, and the coordinator's
\* session starts again from Init's values, at e. Only when the process a
\* drain or a legacy answer named is gone, and at an epoch the model's
\* coordinator could track.
TraceCoordRejoin(e) ==
    /\ coordEpoch <= e /\ e <= epoch
    /\ drainedEpoch < epoch      \* None (-1) included
    /\ legacyEpoch < epoch
    /\ coordEpoch' = e
    /\ coordVersion' = "unknown"
    /\ coordLiveness' = "ALIVE"
    /\ coordCount' = None
    /\ work' = 1
    /\ drainedEpoch' = None
    /\ legacyEpoch' = None
    /\ UNCHANGED <<nodeVars, envVars, cache, net>>

\* The line's step.
TraceStep ==
    LET a == logline.action IN
    /\ \/ Stutter /\ UNCHANGED vars
       \/ MayStutter /\ UNCHANGED vars
       \/ a \in DispActions /\ \E d \in Ds : DispAction(a, d)
       \/ a \in BrokerActions /\ \E b \in Bs : BrokerAction(a, b)
       \/ a \in RegActions /\ RegAction(a, Params.d, Params.b)
       \/ /\ a \in RecvActions
          /\ Params.m \in net
          /\ \E keep \in Keeps : RecvAction(a, Params.m, keep)
          /\ ReplyAsSaid
       \/ /\ a \in RefineActions
          /\ Sessions
          /\ Has(Obs, "coordEpoch")
          /\ TraceCoordRejoin(Obs.coordEpoch)
       \/ /\ ~Stutter
          /\ a \notin DispActions \cup BrokerActions \cup RegActions \cup RecvActions \cup RefineActions
          /\ NullaryAction(a)
          /\ SentAsSaid
          /\ VersionAsSaid
    /\ Agrees
    /\ l' = l + 1
    /\ pending' = IF ~FreeEnv /\ LoseAt[tid][l] THEN SentBy(Logs[tid], l) ELSE NoMsg
    /\ UNCHANGED tid

\* The lookahead's loss of the message (or REGISTER) the last line sent.
TraceLose ==
    /\ IF Has(pending, "disp") THEN NetLoseRegister(pending) ELSE NetLose(pending)
    /\ pending' = NoMsg
    /\ UNCHANGED <<tid, l>>

\* TRACE_FREE_ENV: any message is lost between two lines.
TraceEnv ==
    /\ FreeEnv
    /\ \/ \E m \in net : NetLose(m)
       \/ \E r \in regs : NetLoseRegister(r)
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
