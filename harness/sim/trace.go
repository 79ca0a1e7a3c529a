package sim

import (
	"github.com/drainproof/drainproof/tla/names"

	"fmt"
	"io"
	"slices"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the simulator's side of trace validation (docs/trace.md).
// The components trace their own actions (eventservice, node,
// coordinator, logcoord: see their trace.go); the simulator traces what
// only the environment knows, the restarts:
//
//	runner.crash              NodeCrashRestart
//	runner.upgradeController  UpgradeRestart
//
// and never the network's losses and duplicates (the checker fills those
// in). The run is sequential, so the lines come in the order of the steps.

// TraceMaxEpoch is the largest epoch a traced model-scope run reaches:
// the trace bound of the model's MaxEpoch (spec.MaxEpochLimit).
const TraceMaxEpoch = 15

// modelScope (Config.ModelScope) keeps a run within the TLA+ model
// (tla/DrainRegistration.tla), whose coordinator drains T once, from the
// start, with one unit of maintainer work, and whose LogCoordinator expires
// only entries of restarted processes. A model-scope run therefore starts
// the drain session at once, gives the maintainers one unit of work, has
// no legacy peer, no stale LogCoordinator, no cache TTL, no rejoin after
// a restart (so one drain), and restarts T at most up to TraceMaxEpoch.
// Everything else (collectors, broker steps, store faults, losses,
// duplicates, delays, crashes, the upgrade restart) is as in a full run.
func (r *runner) startModelScope() error {
	if !r.model {
		return nil
	}
	if _, err := r.c.Coord.DrainNode(Target, r.c.now); err != nil {
		return err
	}
	if _, ok := r.c.Coord.Target(); !ok {
		return fmt.Errorf("sim: model scope: no drain session")
	}
	r.sessionSeen, r.work = true, 1
	return nil
}

// forgetOldProcess: in a model-scope run the LogCoordinator now and then
// drops the crashed process's entry (the model's LogCoordExpire of a
// process that no longer reports; a full run drops it at the rejoin), so
// that the coordinator may get the unknown answer of an empty cache.
func (r *runner) forgetOldProcess() {
	if r.model && r.chance(0.5) {
		r.c.LogCoord.RemoveNode(Target)
	}
}

// mayRestart reports whether T may restart now (a model-scope run, and a
// traced full run, stays within TraceMaxEpoch).
func (r *runner) mayRestart() bool { return !r.bounded || r.c.Epoch() < TraceMaxEpoch }

// modelBus bounds the distinct messages in flight before each step of a
// model-scope run: the model's network holds at most MaxMsgs (8) distinct
// messages, and one step sends at most four.
const modelBus = 4

// trimBus loses the oldest messages (an environment step, as r.lose)
// until at most modelBus distinct ones are in flight (model scope, and a
// traced full run).
func (r *runner) trimBus() {
	for r.bounded && distinct(r.c.bus) > modelBus {
		r.res.MessagesLost++
		_ = r.c.NetLose(0)
	}
}

func distinct(bus []Msg) int {
	n := 0
	for i, m := range bus {
		if !slices.ContainsFunc(bus[:i], m.sameAs) {
			n++
		}
	}
	return n
}

func cacheTTL(cfg Config) int64 {
	if cfg.ModelScope {
		return 0
	}
	return 10
}

// restarted follows T's restart (action): in a model-scope run the
// network loses what T's old processes sent the coordinator (heartbeats,
// responses), and the restart is traced. The model's coordinator learns
// the version of the process it tracks only while that process runs
// (CoordLearnVersion needs coordEpoch = epoch); the coordinator keeps the
// version per node, so a late message of an old process of an epoch newer
// than the coordinator's would make it track that process with a version
// the model's does not know. Those are lost; the old process's messages of
// an epoch the coordinator has already seen stay in flight: delivered,
// they are stale (the coordinator must drop them, D2), as in the model.
func (r *runner) restarted(action names.Action) {
	if r.model {
		c := r.c
		seen := c.Coord.NodeView(Target).Epoch
		for i := len(c.bus) - 1; i >= 0; i-- {
			m := c.bus[i]
			if (m.Kind == node.KindHb && m.Hb.Epoch < c.epoch && m.Hb.Epoch > seen) ||
				(m.Kind == node.KindResp && m.Resp.Epoch < c.epoch && m.Resp.Epoch > seen) {
				r.res.MessagesLost++
				_ = c.NetLose(i)
			}
		}
	}
	r.traceRestart(action)
}

// traceRestart traces T's restart (action) with the new process's state.
func (r *runner) traceRestart(action names.Action) {
	c := r.c
	tr := c.cfg.Tracer
	if c.procs != nil {
		tr = c.tW()
	}
	if tr == nil {
		return
	}
	vars := []trace.Var{trace.Int("epoch", int64(c.epoch)), trace.Str("liveness", c.proc.live.Load().String()),
		trace.Bool("admissionClosed", c.proc.svc.AdmissionClosed())}
	for _, id := range c.clusterIDs() {
		vars = append(vars, trace.At("count", string(id), int64(0))) // a new process: no registration
	}
	for d := range c.cfg.Dispatchers { // the new process's registry is empty: no live stat
		vars = append(vars, trace.At("pc", string(Dispatcher(d)), "idle"))
	}
	for d := range c.cfg.Dispatchers {
		vars = append(vars, trace.At("removed", string(Dispatcher(d)), true))
	}
	l := trace.Line{Action: action, V: "new", Vars: vars, From: c.restartFrom(action == names.UpgradeRestart)}
	tr.Trace(&l)
	if c.procs != nil {
		c.procs.tFirst = l.At
	}
}

// clusterIDs are the IDs of the cluster's upstream clusters: the model's
// brokers.
func (c *Cluster) clusterIDs() []eventservice.ClusterID {
	out := make([]eventservice.ClusterID, c.cfg.Clusters)
	for k := range out {
		out[k] = ClusterID(k)
	}
	return out
}

// TraceHeader returns the header of a trace of a run of cfg: the model
// constants it is checked against (the trace bounds of spec) and the
// run's source.
func TraceHeader(cfg Config) trace.Header {
	if cfg.Transport == "" {
		cfg.Transport = "heartbeat"
	}
	nd, ntt := cfg.Dispatchers, cfg.TableTriggers
	if nd == 0 {
		nd, ntt = 4, 1
	}
	ds, tts := []string{}, []string{}
	for d := range nd {
		ds = append(ds, string(Dispatcher(d)))
		if d >= nd-ntt {
			tts = append(tts, string(Dispatcher(d)))
		}
	}
	scope, mapping := "full", trace.MappingSessions
	if cfg.ModelScope {
		scope, mapping = "model", ""
	}
	nc := cfg.Clusters
	if nc == 0 {
		nc = 2 // Run's default
	}
	brokers := make([]string, nc)
	for k := range brokers {
		brokers[k] = string(ClusterID(k))
	}
	return trace.Header{Source: fmt.Sprintf("sim seed %d, %d steps, %s scope", cfg.Seed, cfg.Steps, scope), Mapping: mapping,
		Model: map[string]any{"Dispatchers": ds, "TableTriggers": tts, "Brokers": brokers,
			"Versions": []string{"new"}, "MaxEpoch": TraceMaxEpoch, "MaxReg": 15,
			"MaxMsgs": 8, "Transport": string(cfg.Transport), "Bugs": referenceBugs()}}
}

// TraceWriters returns a Config.Traces for a run of cfg: each process's
// trace, with the header of TraceHeader(cfg) naming the process, goes to
// the writer open returns for the process's name (closed with the trace
// if it is an io.Closer).
func TraceWriters(cfg Config, open func(proc string) (io.Writer, error)) func(proc, after string, clock uint64) (*trace.Writer, error) {
	h := TraceHeader(cfg)
	return func(proc, after string, clock uint64) (*trace.Writer, error) {
		w, err := open(proc)
		if err != nil {
			return nil, err
		}
		ph := h
		ph.Process, ph.After, ph.Clock = proc, after, clock
		tw, err := trace.NewWriter(w, ph)
		if err != nil {
			if c, ok := w.(io.Closer); ok {
				_ = c.Close() // the header's error is the one to report
			}
			return nil, err
		}
		return tw, nil
	}
}

// referenceBugs is the header's Bugs: none, but in a -tags bugs build the
// bugs switched on only because the bug under test requires them
// (bugs.Reference: SkipDraining beside NodeAcceptsSkip), so that the
// trace is checked against the model that sends the skip, and what it
// rejects is the node taking it.
func referenceBugs() []string {
	return append([]string{}, bugs.Reference()...)
}
