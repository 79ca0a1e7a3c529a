package lincheck

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the recorder's trace mode (Config.Tracer set): the
// recording stays inside the model (tla/DrainRegistration.tla), so that
// `checker trace` can validate its trace (docs/trace.md, "lincheck").
//
//   - The dispatchers are the model's: at most spec.MaxDispatchers (8),
//     d0..d5 and the table triggers t0, t1 (TraceIDs); t2 is not used.
//   - One reporter: only client 0 reports, through a real node's
//     heartbeat (impl/node, heartbeat transport: NodeStartHeartbeat, the
//     service's Report, NodeSendHeartbeat), which a real coordinator
//     (impl/coordinator) observes (CoordRecvHeartbeat) and polls
//     (DrainNode). The model has one sample; the real system has one
//     heartbeat loop per node. The other clients draw a Subscribers read
//     where they would report.
//   - The close is the model's: the close operation first drives the node
//     to STOPPING as the coordinator does (CoordSendDraining,
//     NodeRecvCommand, CoordRecvResponse, MaintainerReportProgress,
//     CoordSendStopping, NodeRecvCommand, CoordRecvResponse), then calls
//     CloseAdmission. The service's Stopping callback reads the node's
//     liveness, so from the STOPPING step on a registration's gate check
//     or a report closes admission too, as in the model.
//
// The liveness steps are taken while no client operation is under way
// (quiet: every operation holds it shared, the two liveness steps hold it
// exclusively), because a gate check and a heartbeat read the liveness
// before they trace their line: a liveness step between the read and the
// line would put the lines out of the order of the effects. Everything
// else stays concurrent: registrations, removals, resets, cleanups, the
// reporter's heartbeats and the CloseAdmission itself.

// traceNode names the node whose event service is recorded.
const traceNode node.ID = "T"

// NumTraceIDs is the size of a traced recording's dispatcher universe:
// the NumOrdinary ordinary dispatchers and the first NumTraceIDs -
// NumOrdinary table triggers (the model's Go transcription holds 8).
const NumTraceIDs = NumOrdinary + 2

// tracedRun is the node and the coordinator of a traced recording.
type tracedRun struct {
	live  *node.LivenessStore
	node  *node.Node
	coord *coordinator.Coordinator
	quiet sync.RWMutex
	now   atomic.Int64 // the coordinator's logical clock
}

func newTracedRun(t trace.Tracer) *tracedRun {
	if t == nil {
		return nil
	}
	return &tracedRun{live: new(node.LivenessStore)}
}

// stopping is the service's Stopping callback.
func (tr *tracedRun) stopping() bool { return tr.live.Load() == node.Stopping }

// start builds the node around svc and the coordinator, which learns the
// node's version (CoordLearnVersion) and starts the drain session.
func (tr *tracedRun) start(svc *eventservice.Service, t trace.Tracer) error {
	var err error
	tr.node, err = node.New(node.Config{ID: traceNode, Epoch: 1, Version: node.VersionBrokerDrain,
		Transport: node.TransportHeartbeat, Service: svc, Liveness: tr.live, Tracer: t})
	if err != nil {
		return err
	}
	tr.coord, err = coordinator.New(coordinator.Config{Transport: node.TransportHeartbeat, Tracer: t, TraceNode: traceNode})
	if err != nil {
		return err
	}
	tr.coord.AddNode(traceNode, 1, 0)
	tr.coord.ObserveVersion(traceNode, 1, node.VersionBrokerDrain)
	if _, err := tr.coord.DrainNode(traceNode, 0); err != nil {
		return fmt.Errorf("lincheck: drain session: %w", err)
	}
	return nil
}

// heartbeat is the reporter's report: a heartbeat of the node, observed
// by the coordinator, then the coordinator's poll.
func (tr *tracedRun) heartbeat() (int64, bool) {
	now := tr.now.Add(1)
	hb := tr.node.Heartbeat(now)
	tr.coord.ObserveHeartbeat(hb, now)
	_, _ = tr.coord.DrainNode(traceNode, now)
	return hb.Count, hb.AdmissionClosed
}

// drive takes the node to STOPPING as the coordinator drives it, with no
// client operation under way. It fails if the coordinator does not ask
// for the step the model's coordinator takes next.
func (tr *tracedRun) drive() error {
	tr.quiet.Lock()
	defer tr.quiet.Unlock()
	for _, want := range []node.Liveness{node.Draining, node.Stopping} {
		now := tr.now.Add(1)
		cmd, ok := tr.coord.NextCommand(now)
		if !ok || cmd.Target != want {
			return fmt.Errorf("lincheck: the coordinator sent %v (%v), want %v", cmd.Target, ok, want)
		}
		resp, _ := tr.node.RecvCommand(cmd)
		tr.coord.ObserveResponse(resp, now)
		if want == node.Draining {
			tr.coord.ReportProgress(traceNode, coordinator.Progress{})
		}
	}
	return nil
}

// TraceHeader returns the header of a trace of a recording (Config.Tracer,
// the trace mode): the model's constants over the traced universe d0..d5,
// t0, t1 (the table triggers), brokers c1 and c2, the new version, the
// heartbeat transport, no bug.
func TraceHeader(cfg Config) trace.Header {
	var ds, tts []string
	for id := range NumTraceIDs {
		ds = append(ds, IDName(id))
		if isTrigger(id) {
			tts = append(tts, IDName(id))
		}
	}
	brokers := make([]string, NumBrokers)
	for k := range brokers {
		brokers[k] = string(clusterOf(k))
	}
	return trace.Header{Source: fmt.Sprintf("lincheck seed %d, %d clients, %d ops, trace mode", cfg.Seed, cfg.Clients, cfg.Ops),
		Model: map[string]any{"Dispatchers": ds, "TableTriggers": tts, "Brokers": brokers, "Versions": []string{"new"},
			"MaxEpoch": 15, "MaxReg": 15, "MaxMsgs": 8, "Transport": "heartbeat", "Bugs": []string{}}}
}
