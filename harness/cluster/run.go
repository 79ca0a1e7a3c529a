package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/harness/lincheck"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// Fault kinds of Config.Faults.
const (
	FaultKill      = "kill"
	FaultPause     = "pause"
	FaultPartition = "partition"
	FaultDelay     = "delay"
	FaultDisk      = "disk"
)

// FaultNames lists the fault kinds Run injects.
func FaultNames() []string {
	return []string{FaultKill, FaultPause, FaultPartition, FaultDelay, FaultDisk, FaultStale}
}

// DiskFaultRate is the probability with which a node fails a write
// batch's Set or Commit under FaultDisk (drainproofd --disk-faults).
const DiskFaultRate = 0.05

// Config configures a cluster run.
type Config struct {
	// Binary is the drainproofd binary.
	Binary string
	// Nodes is the number of node processes (≥ 3).
	Nodes int
	// Seed fixes the fault schedule, the collectors' delays and the
	// upgrade's legacy node.
	Seed uint64
	// Duration is how long producers commit and faults are injected.
	Duration time.Duration
	// Faults are the fault kinds to inject (FaultNames).
	Faults []string
	// Upgrade runs a rolling upgrade: one node starts as a legacy
	// (version 0) process, and every node is drained, stopped and
	// restarted as the new version in turn.
	Upgrade bool
	// Transport is drainproofd's --transport (logcoord if empty).
	Transport string
	// Tables is the number of tables (2 × Nodes if 0).
	Tables int
	// DrainBound is how long a drain may take once the faults stopped
	// (15s if 0).
	DrainBound time.Duration
	// TTL is the LogCoordinator's TTL (500ms if 0); pauses last longer.
	TTL time.Duration
	// MemberTTL is the coordinator's --member-ttl, the silence after
	// which it removes a node (drainproofd's default, 3s, if 0). A short
	// one makes nodes rejoin at the same epoch now and then.
	MemberTTL time.Duration
	// Env is added to every process's environment (DRAINPROOF_BUG=…).
	Env []string
	// Keep, if set, is a directory where the processes' logs are copied
	// (the trace of the run); the working directory is always removed.
	Keep string
	// Log receives progress lines (nil: none).
	Log io.Writer
	// TLS runs every connection as mutual TLS with certificates made for
	// the run (a CA in the working directory), the operator identity
	// OperatorIdentity, and probes the access rules (tls.go).
	TLS bool
	// Trace, if set, is a directory where the per-process traces of the
	// coordinator, the LogCoordinator and one node's processes are
	// collected (a run directory of checker trace) and validated after
	// the run (trace.go; Result.Trace).
	Trace string
}

// Drain is one drain of the run: a SIGTERM of a node and its outcome.
type Drain struct {
	Node     string `json:"node"`
	Epoch    uint64 `json:"epoch"`
	Complete bool   `json:"complete"`
	Legacy   bool   `json:"legacy"`
	// TookMS is the node's own measure, from its first DrainNode poll to
	// the coordinator's answer.
	TookMS int64 `json:"took_ms"`
	// At is when the drain completed (the node's clock).
	At time.Time `json:"at"`
	// Exit is the process's exit code (0: drained; 1: shutdown timeout).
	Exit int `json:"exit"`
}

// FaultEvent is one injected fault.
type FaultEvent struct {
	At     time.Duration `json:"at_ns"`
	Kind   string        `json:"kind"`
	Target string        `json:"target"`
	Detail string        `json:"detail,omitempty"`
}

// Kinds of TimelineEvent.
const (
	EventStart       = "start"       // the process started (Detail: its version)
	EventRestart     = "restart"     // the process started again (Detail: why, its version)
	EventLiveness    = "liveness"    // a collector saw the node's liveness change (Detail: ALIVE, DRAINING, STOPPING; Value: its epoch)
	EventSigterm     = "sigterm"     // the upgrade asked the node to drain (SIGTERM)
	EventDrainDone   = "drain-done"  // the node's log says its drain is done (Detail: complete or legacy, took)
	EventExit        = "exit"        // the node exited after SIGTERM (Value: its exit code)
	EventResume      = "resume"      // a paused process got SIGCONT
	EventDispatchers = "dispatchers" // the collectors' dispatchers registered with the node changed (Value: how many)
	EventFaultsEnd   = "faults-end"  // the faults and the producers stopped (Process "")
)

// TimelineEvent is one thing that happened to a process during the run,
// for the run's timeline (checker cluster --html). Faults are in
// Result.Faults, with the same clock.
type TimelineEvent struct {
	// At is the time since the run's start (the checker's clock; a drain's
	// end is the node's own clock).
	At      time.Duration `json:"at_ns"`
	Process string        `json:"process"`
	Kind    string        `json:"kind"`
	Detail  string        `json:"detail,omitempty"`
	Value   int64         `json:"value,omitempty"`
}

// Result is a run's outcome. Violations is empty for a passing run.
type Result struct {
	Seed       uint64   `json:"seed"`
	Nodes      int      `json:"nodes"`
	Tables     int      `json:"tables"`
	Violations []string `json:"violations"`
	// Trace is the trace validation's verdict (Config.Trace), nil if not
	// traced.
	Trace           *TraceVerdict `json:"trace,omitempty"`
	EventsCommitted int64         `json:"events_committed"`
	EventsRead      int           `json:"events_read"`
	Lost            int           `json:"lost"`
	Duplicated      int           `json:"duplicated"`
	OutOfOrder      int           `json:"out_of_order"`
	Registrations   int           `json:"registrations"`
	Drains          []Drain       `json:"drains"`
	Faults          []FaultEvent  `json:"faults"`
	Restarts        int           `json:"restarts"`
	// LinOps is the size of the registry history recorded at the gRPC
	// boundary; LinOutcome porcupine's verdict on it (ok, illegal,
	// unknown).
	LinOps      int           `json:"lincheck_ops"`
	LinOutcome  string        `json:"lincheck"`
	UpgradeWall time.Duration `json:"upgrade_wall_ns"`
	Wall        time.Duration `json:"wall_ns"`
	// TLSProbe is the outcome of the access probe of a TLS run (empty
	// without Config.TLS).
	TLSProbe string `json:"tls_probe,omitempty"`
	// BugsReached names the bugs switched on (Config.Env's
	// DRAINPROOF_BUG and the bugs it requires) whose code some process
	// ran: each process logs "bug site reached" once per bug.
	BugsReached []string `json:"bugs_reached,omitempty"`
	// Processes names the run's processes (logcoord, coordinator, n1…);
	// Timeline is what happened to them, in time order.
	Processes []string        `json:"processes"`
	Timeline  []TimelineEvent `json:"timeline"`

	// Dir, Ports and PIDs are the run's working directory, listening
	// ports and processes, all gone when Run returns (tests check it).
	Dir   string `json:"-"`
	Ports []int  `json:"-"`
	PIDs  []int  `json:"-"`
}

// run is one cluster run's state.
type run struct {
	cfg   Config
	dir   string
	start time.Time
	rng   *rand.Rand

	coord, lc *proc
	nodes     []*proc
	in        []*proxy // per node: in front of its gRPC endpoint
	toCoord   []*proxy // per node: its way to the coordinator
	toLC      []*proxy // per node: its way to the LogCoordinator
	w         *workload
	tls       *tlsSetup   // nil without Config.TLS
	tr        *traceState // nil without Config.Trace

	mu         sync.Mutex
	faults     []FaultEvent
	timeline   []TimelineEvent
	restarts   int
	violations []string
	draining   map[int]bool // nodes the upgrade is draining
	staled     map[int]bool // nodes FaultStale has hit
	linOps     int
	linOutcome string
	tlsProbe   string
	// legacyGone is when no legacy process is alive any more: the
	// start without --upgrade, the legacy node's upgrade with it.
	legacyGone time.Time

	// logMu orders the log lines of the run's goroutines (the upgrade,
	// the fault injector, the checks): Config.Log need not be safe for
	// concurrent use.
	logMu sync.Mutex
}

func (r *run) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		line := fmt.Sprintf("[%6.2fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
		r.logMu.Lock()
		defer r.logMu.Unlock()
		_, _ = io.WriteString(r.cfg.Log, line)
	}
}

// event records a TimelineEvent now.
func (r *run) event(process, kind, detail string, value int64) {
	r.mu.Lock()
	r.timeline = append(r.timeline, TimelineEvent{At: time.Since(r.start), Process: process, Kind: kind, Detail: detail, Value: value})
	r.mu.Unlock()
}

func (r *run) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

// Run runs one cluster: a LogCoordinator, a coordinator and cfg.Nodes
// nodes on 127.0.0.1, producers and collectors for cfg.Tables tables, the
// seeded fault schedule and, with cfg.Upgrade, a rolling upgrade; then it
// checks the run. It returns an error only when the run could not be
// made (a process that does not start); a run that ran and broke a rule
// returns a Result with Violations. Nothing outlives Run: every process
// is killed, every port closed, the working directory removed.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	if cfg.Nodes < 3 {
		return nil, fmt.Errorf("cluster: %d nodes (want at least 3)", cfg.Nodes)
	}
	if cfg.Binary == "" {
		return nil, errors.New("cluster: no drainproofd binary")
	}
	if cfg.Duration <= 0 {
		return nil, fmt.Errorf("cluster: duration %v (want > 0)", cfg.Duration)
	}
	for _, f := range cfg.Faults {
		if !slices.Contains(FaultNames(), f) {
			return nil, fmt.Errorf("cluster: fault %q (want some of %s)", f, strings.Join(FaultNames(), ","))
		}
	}
	if cfg.Tables <= 0 {
		cfg.Tables = 2 * cfg.Nodes
	}
	if cfg.DrainBound <= 0 {
		cfg.DrainBound = 15 * time.Second
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 500 * time.Millisecond
	}
	if cfg.MemberTTL < 0 {
		return nil, fmt.Errorf("cluster: negative member TTL %v", cfg.MemberTTL)
	}
	if cfg.Transport == "" {
		cfg.Transport = "logcoord"
	}
	dir, err := os.MkdirTemp("", "drainproof-cluster-")
	if err != nil {
		return nil, err
	}
	// start without its monotonic reading: every instant of the timeline
	// is then taken on the wall clock, the clock of the processes' own log
	// times (a drain's at_unix_nano), not half on the monotonic clock,
	// which drifts from it by up to a few ms over a run.
	r := &run{cfg: cfg, dir: dir, start: time.Now().Round(0), rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), draining: map[int]bool{}, staled: map[int]bool{}}
	defer func() {
		r.teardown()
		if cfg.Keep != "" {
			if kerr := keepLogs(dir, cfg.Keep); kerr != nil && err == nil {
				err = kerr
			}
		}
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := r.boot(); err != nil {
		return nil, err
	}
	if !cfg.Upgrade {
		r.legacyGone = r.start
	}
	res, err = r.exercise(ctx)
	if res != nil && r.tr != nil {
		// Every process ends first (a kill: each has written through
		// every line another process saw), then the traces are read.
		r.teardown()
		r.checkTrace(res)
	}
	if res != nil {
		res.Dir = dir
		for _, p := range append(append([]*proc{}, r.nodes...), r.coord, r.lc) {
			res.Ports = append(res.Ports, p.port)
			res.PIDs = append(res.PIDs, p.pids...)
		}
		for _, l := range [][]*proxy{r.in, r.toCoord, r.toLC} {
			for _, x := range l {
				res.Ports = append(res.Ports, x.l.Addr().(*net.TCPAddr).Port)
			}
		}
	}
	return res, err
}

// keepLogs copies the processes' logs of dir to keep.
func keepLogs(dir, keep string) error {
	if err := os.MkdirAll(keep, 0o755); err != nil {
		return err
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(keep, filepath.Base(l)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) newProc(name, role string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, role: role, port: port, logPath: filepath.Join(r.dir, name+".log"), version: 2}
	if role == "node" {
		p.dataDir = filepath.Join(r.dir, name)
	}
	return p, nil
}

// boot starts the LogCoordinator, the coordinator, the proxies and the
// nodes.
func (r *run) boot() error {
	var err error
	if r.cfg.TLS {
		if r.tls, err = newTLSSetup(r.dir); err != nil {
			return fmt.Errorf("cluster: tls: %w", err)
		}
		for _, name := range []string{"logcoord", CoordinatorIdentity} {
			if err := r.tls.issue(name); err != nil {
				return fmt.Errorf("cluster: tls: %w", err)
			}
		}
		for i := range r.cfg.Nodes {
			if err := r.tls.issue(fmt.Sprintf("n%d", i+1)); err != nil {
				return fmt.Errorf("cluster: tls: %w", err)
			}
		}
	}
	legacy := -1
	if r.cfg.Upgrade {
		legacy = r.rng.IntN(r.cfg.Nodes)
	}
	if r.cfg.Trace != "" {
		t := traceNodeIndex(r.cfg.Nodes, legacy)
		if t < 0 {
			return errors.New("cluster: --trace: no node to trace")
		}
		r.tr = &traceState{dir: filepath.Join(r.dir, "traces"), node: t, restart: "crash"}
		if err := os.MkdirAll(r.tr.dir, 0o755); err != nil {
			return err
		}
	}
	if r.lc, err = r.newProc("logcoord", "logcoord"); err != nil {
		return err
	}
	if r.coord, err = r.newProc("coordinator", "coordinator"); err != nil {
		return err
	}
	if err := r.startProc(r.lc); err != nil {
		return err
	}
	r.event(r.lc.name, EventStart, "", 0)
	if err := r.startProc(r.coord); err != nil {
		return err
	}
	r.event(r.coord.name, EventStart, "", 0)
	for i := range r.cfg.Nodes {
		p, err := r.newProc(fmt.Sprintf("n%d", i+1), "node")
		if err != nil {
			return err
		}
		if i == legacy {
			p.version = 0
		}
		r.nodes = append(r.nodes, p)
		for _, pp := range []struct {
			list   *[]*proxy
			target string
		}{{&r.in, p.addr()}, {&r.toCoord, r.coord.addr()}, {&r.toLC, r.lc.addr()}} {
			x, err := newProxy(pp.target)
			if err != nil {
				return err
			}
			*pp.list = append(*pp.list, x)
		}
	}
	for _, p := range r.nodes {
		if err := r.startProc(p); err != nil {
			return err
		}
		r.event(p.name, EventStart, fmt.Sprintf("version %d", p.version), 0)
	}
	r.logf("cluster up: %d nodes (legacy: %s), transport %s, dir %s", r.cfg.Nodes, r.legacyName(legacy), r.cfg.Transport, r.dir)
	return nil
}

func (r *run) legacyName(i int) string {
	if i < 0 {
		return "none"
	}
	return r.nodes[i].name
}

func (r *run) nodeIndex(p *proc) int { return slices.Index(r.nodes, p) }

// startProc starts p's next process with its role's flags.
func (r *run) startProc(p *proc) error {
	args := []string{"--role", p.role, "--transport", r.cfg.Transport}
	switch p.role {
	case "logcoord":
		args = append(args, "--ttl", r.cfg.TTL.String())
	case "coordinator":
		args = append(args, "--logcoord", r.lc.addr())
		if r.cfg.MemberTTL > 0 {
			args = append(args, "--member-ttl", r.cfg.MemberTTL.String())
		}
	case "node":
		i := r.nodeIndex(p)
		args = append(args, "--id", p.name, "--data-dir", p.dataDir, "--version", fmt.Sprint(p.version),
			"--advertise", r.in[i].addr(), "--coordinator", r.toCoord[i].addr(),
			"--disk-faults", r.diskRate(), "--disk-seed", fmt.Sprint(r.cfg.Seed+uint64(i)),
			"--heartbeat", "100ms", "--schema-delay", "1500ms", "--maintainer-move", "1s", "--shutdown-timeout", (r.cfg.DrainBound + r.cfg.Duration).String())
		// A node reports to the LogCoordinator in either transport; the
		// traced node T does so only in the logcoord transport, whose model
		// has the reports (the heartbeat transport's model has none).
		if r.tr == nil || r.cfg.Transport == "logcoord" || p.name != r.traceNodeName() {
			args = append(args, "--logcoord", r.toLC[i].addr())
		}
	}
	if r.tls != nil {
		args = append(args, r.tls.flags[p.name]...)
	}
	targs, err := r.traceArgs(p)
	if err != nil {
		return err
	}
	return p.start(r.cfg.Binary, r.cfg.Env, append(args, targs...))
}

// diskRate is the nodes' --disk-faults.
func (r *run) diskRate() string {
	if slices.Contains(r.cfg.Faults, FaultDisk) {
		return fmt.Sprint(DiskFaultRate)
	}
	return "0"
}

// checkResources asks every node for the store resources it holds once
// every call returned: a write batch or an iterator still open is a leak
// (LeakBatchOnError, TiCDC PR #4366).
func (r *run) checkResources(ctx context.Context) {
	for i, c := range r.w.conns {
		// A write whose client gave up may still be committing (a slow
		// sync): a leak is what stays open, so look for 3 s.
		var st *pb.StatusResponse
		var err error
		for deadline := time.Now().Add(3 * time.Second); ; {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			st, err = pb.NewEventServiceClient(c).Status(cctx, &pb.StatusRequest{})
			cancel()
			if err == nil && st.GetOpenBatches() == 0 && st.GetOpenIterators() == 0 || time.Now().After(deadline) {
				break
			}
			sleep(ctx, 100*time.Millisecond)
		}
		if err != nil {
			r.violate("%s: no status after the run: %v", r.nodes[i].name, err)
			continue
		}
		if st.GetOpenBatches() != 0 || st.GetOpenIterators() != 0 {
			r.violate("%s (epoch %d) holds %d write batches and %d iterators open after every call returned (a leak)",
				r.nodes[i].name, st.GetEpoch(), st.GetOpenBatches(), st.GetOpenIterators())
		}
	}
}

// teardown kills every process and closes every proxy.
func (r *run) teardown() {
	for _, p := range append(append([]*proc{}, r.nodes...), r.coord, r.lc) {
		if p != nil {
			p.kill()
		}
	}
	for _, l := range [][]*proxy{r.in, r.toCoord, r.toLC} {
		for _, x := range l {
			x.close()
		}
	}
}

// exercise runs the workload, the faults and the upgrade, then checks.
func (r *run) exercise(ctx context.Context) (*Result, error) {
	addrs := make([]string, len(r.in))
	for i, x := range r.in {
		addrs[i] = x.addr()
	}
	var dial []grpc.DialOption
	if r.tls != nil {
		dial = append(dial, r.tls.dial)
	}
	w, err := newWorkload(addrs, r.cfg.Tables, r.cfg.Seed, dial...)
	if err != nil {
		return nil, err
	}
	r.w = w
	defer w.close()
	// The registry phase, on the first node, before anything else runs.
	lin, n, err := r.linPhase(ctx, 0)
	switch {
	case err != nil:
		r.violate("registry history over gRPC not recorded: %v", err)
	case lin.Outcome == lincheck.NotLinearizable:
		r.violate("the registry history of %s (%d operations, recorded at the gRPC boundary) is not linearizable (porcupine)", r.nodes[0].name, n)
	}
	r.linOps, r.linOutcome = n, string(lin.Outcome)
	r.logf("registry history: %d operations, porcupine: %s", n, lin.Outcome)
	if r.tls != nil {
		r.probeTLS(ctx)
	}
	produce, stopProduce := context.WithCancel(ctx)
	collect, stopCollect := context.WithCancel(ctx)
	defer stopProduce()
	defer stopCollect()
	w.start(produce, collect)
	watch, stopWatch := context.WithCancel(ctx)
	var watchWG sync.WaitGroup
	watchWG.Add(1)
	go func() { defer watchWG.Done(); r.watchObservations(watch, dial) }()
	defer func() { stopWatch(); watchWG.Wait() }()
	faultsEnd := time.Now().Add(r.cfg.Duration)
	var wg sync.WaitGroup
	if len(r.cfg.Faults) > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); r.injectFaults(ctx, faultsEnd) }()
	}
	var upgradeWall time.Duration
	if r.cfg.Upgrade {
		// The upgrade starts a quarter into the run, under the faults.
		sleep(ctx, r.cfg.Duration/4)
		t0 := time.Now()
		r.upgrade(ctx, faultsEnd)
		upgradeWall = time.Since(t0)
		r.logf("rolling upgrade done in %v", upgradeWall.Round(time.Millisecond))
	}
	sleep(ctx, time.Until(faultsEnd))
	wg.Wait()
	stopProduce()
	r.event("", EventFaultsEnd, "", 0)
	w.pwg.Wait() // a write in flight may still be acknowledged
	// Settle: every process runs (a killed one was restarted), no fault;
	// the collectors must read every acknowledged event.
	r.logf("faults over; settling")
	settle := time.Now().Add(r.cfg.DrainBound)
	for !w.caughtUp() && time.Now().Before(settle) && ctx.Err() == nil {
		sleep(ctx, 50*time.Millisecond)
	}
	stopCollect()
	w.wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.checkResources(ctx)
	return r.check(upgradeWall), nil
}

// upgrade drains, stops and restarts every node in turn as the new
// version, the legacy node first (while it is alive every drain gets the
// legacy answer, §9).
func (r *run) upgrade(ctx context.Context, faultsEnd time.Time) {
	order := make([]*proc, 0, len(r.nodes))
	for _, p := range r.nodes {
		if p.version == 0 {
			order = append(order, p)
		}
	}
	for _, p := range r.nodes {
		if p.version != 0 {
			order = append(order, p)
		}
	}
	for _, p := range order {
		if ctx.Err() != nil {
			return
		}
		// The next node right away, as an upgrade tool does once the
		// restarted one serves (its version may not be known yet: §9).
		r.drainAndRestart(ctx, p, faultsEnd)
	}
}

// drainAndRestart sends SIGTERM to p and waits for it to exit (its drain
// complete), then restarts it as the new version. A drain that has not
// ended DrainBound after it started (or after the faults stopped, if
// later) is a violation; the process is killed then.
func (r *run) drainAndRestart(ctx context.Context, p *proc, faultsEnd time.Time) {
	p.life.Lock()
	defer p.life.Unlock()
	i := r.nodeIndex(p)
	r.mu.Lock()
	r.draining[i] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.draining, i)
		r.mu.Unlock()
	}()
	for attempt := 0; attempt < 3 && ctx.Err() == nil; attempt++ {
		if !p.running() {
			r.restart(p, "the upgrade found it down")
		}
		p.signal(syscall.SIGCONT) // a paused process gets the SIGTERM after it resumes
		start := time.Now()
		r.logf("upgrade: SIGTERM %s (version %d)", p.name, p.version)
		r.sigterm(p)
		p.signal(syscall.SIGTERM)
		r.event(p.name, EventSigterm, fmt.Sprintf("version %d", p.version), 0)
		deadline := start.Add(r.cfg.DrainBound)
		if d := faultsEnd.Add(r.cfg.DrainBound); d.After(deadline) {
			deadline = d
		}
		exitErr, ok := p.wait(ctx, time.Until(deadline))
		if ok {
			r.event(p.name, EventExit, "", int64(exitCode(exitErr)))
		}
		if !ok {
			if ctx.Err() != nil {
				return
			}
			r.violate("drain of %s did not complete within %v of its start (or of the faults' end)", p.name, r.cfg.DrainBound)
			p.kill()
		} else if code := exitCode(exitErr); code == -1 {
			r.logf("upgrade: %s was killed during its drain; again", p.name)
			continue // killed by a fault: restart and drain again
		} else if code != 0 {
			// Its shutdown timeout, or the error it exited with.
			why := p.logLines("shutdown timeout")
			if errs := p.logLines(`"level":"ERROR"`); len(why) == 0 && len(errs) > 0 {
				why = errs[len(errs)-1:]
			}
			r.violate("drain of %s ended with exit %d: %s", p.name, code, strings.Join(why, " "))
		}
		wasLegacy := p.version == 0
		p.version = 2
		if ok && exitCode(exitErr) == 0 {
			r.setRestart(p, "upgrade") // its drain completed: the model's UpgradeRestart
		}
		r.restart(p, "upgraded")
		if wasLegacy {
			r.mu.Lock()
			r.legacyGone = time.Now()
			r.mu.Unlock()
		}
		return
	}
}

// restart starts p again (its data directory kept), on the same port:
// a start that finds the port taken is tried again for a while.
func (r *run) restart(p *proc, why string) {
	p.kill()
	defer r.setRestart(p, "crash") // the next restart's kind, unless an upgrade says otherwise
	var err error
	for range 20 {
		if err = r.startProc(p); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		r.violate("restart of %s (%s): %v", p.name, why, err)
		return
	}
	r.mu.Lock()
	r.restarts++
	r.mu.Unlock()
	r.event(p.name, EventRestart, fmt.Sprintf("%s, version %d", why, p.version), 0)
	r.logf("%s restarted (%s), version %d", p.name, why, p.version)
}

// injectFaults runs the seeded fault schedule until end.
func (r *run) injectFaults(ctx context.Context, end time.Time) {
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(300+r.rng.IntN(700))*time.Millisecond)
		if time.Now().After(end) {
			return
		}
		kind := r.cfg.Faults[r.rng.IntN(len(r.cfg.Faults))]
		r.inject(ctx, kind, end)
	}
}

func (r *run) record(kind, target, detail string) {
	r.mu.Lock()
	r.faults = append(r.faults, FaultEvent{At: time.Since(r.start), Kind: kind, Target: target, Detail: detail})
	r.mu.Unlock()
	r.logf("fault %s %s %s", kind, target, detail)
}

// pickProc picks a process for a kill or a pause: a node mostly, the
// coordinator or the LogCoordinator sometimes; never a node the upgrade
// is draining (the upgrade's own SIGTERM is its fault).
func (r *run) pickProc() (*proc, int) {
	if r.rng.IntN(5) == 0 {
		if r.rng.IntN(2) == 0 {
			return r.coord, -1
		}
		return r.lc, -1
	}
	i := r.rng.IntN(len(r.nodes))
	r.mu.Lock()
	busy := r.draining[i]
	r.mu.Unlock()
	if busy {
		return nil, -1
	}
	return r.nodes[i], i
}

func (r *run) inject(ctx context.Context, kind string, end time.Time) {
	switch kind {
	case FaultKill:
		p, i := r.pickProc()
		if p == nil || !p.life.TryLock() {
			return // the upgrade is draining it
		}
		defer p.life.Unlock()
		if !p.running() {
			return
		}
		detail := ""
		if i >= 0 {
			// Kill it in the middle of a Pebble write if one comes soon.
			for range 50 {
				if r.writing(i) {
					detail = "mid-write"
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		p.kill()
		r.record(kind, p.name, detail)
		sleep(ctx, time.Duration(100+r.rng.IntN(400))*time.Millisecond)
		r.restart(p, "after SIGKILL")
	case FaultPause:
		p, _ := r.pickProc()
		if p == nil || !p.running() {
			return
		}
		d := r.cfg.TTL*3/2 + time.Duration(r.rng.IntN(int(r.cfg.TTL.Milliseconds())))*time.Millisecond
		if p.signal(syscall.SIGSTOP) {
			r.record(kind, p.name, d.String())
			sleep(ctx, d)
			p.signal(syscall.SIGCONT)
			r.event(p.name, EventResume, "", 0)
		}
	case FaultPartition:
		i := r.rng.IntN(len(r.nodes))
		d := time.Duration(500+r.rng.IntN(1500)) * time.Millisecond
		peer, x := "coordinator", r.toCoord[i]
		if r.rng.IntN(2) == 0 {
			peer, x = "logcoord", r.toLC[i]
		}
		x.partition()
		r.record(kind, r.nodes[i].name+"->"+peer, d.String())
		sleep(ctx, d)
		x.heal()
	case FaultStale:
		r.injectStale(ctx, end)
	case FaultDisk:
		// Disk errors are drawn inside each node (--disk-faults), all
		// the run long.
		return
	case FaultDelay:
		i := r.rng.IntN(len(r.nodes))
		d := time.Duration(500+r.rng.IntN(1000)) * time.Millisecond
		lat := time.Duration(10+r.rng.IntN(70)) * time.Millisecond
		x := r.in[i]
		x.cut() // the messages in flight are lost
		x.setDelay(lat)
		r.record(kind, r.nodes[i].name, fmt.Sprintf("loss, then %v per chunk for %v", lat, d))
		sleep(ctx, d)
		x.heal()
	}
}

// writing reports whether a producer's WriteEvents to node i is in
// flight.
func (r *run) writing(i int) bool {
	for _, t := range r.w.tables {
		if t.home == i && t.inflight.Load() > 0 {
			return true
		}
	}
	return false
}

// logLine is the part of a drainproofd JSON log line the checks read.
type logLine struct {
	Msg          string `json:"msg"`
	Epoch        uint64 `json:"epoch"`
	Complete     bool   `json:"complete"`
	Legacy       bool   `json:"legacy"`
	DrainedEpoch uint64 `json:"drained_epoch"`
	TookMS       int64  `json:"took_ms"`
	AtUnixNano   int64  `json:"at_unix_nano"`
}

// observed returns the timeline events of what the collectors saw: each
// node's liveness changes and the number of their dispatchers registered
// with it, a dispatcher counting from its REGISTER's OK to its REMOVE or
// its process's end (a kill, an exit, a restart), whichever is first.
// The caller holds r.mu and r.w.mu.
func (r *run) observed() []TimelineEvent {
	var out []TimelineEvent
	for _, o := range r.w.lives {
		out = append(out, TimelineEvent{At: o.at.Sub(r.start), Process: r.nodes[o.node].name, Kind: EventLiveness,
			Detail: o.liveness.String(), Value: int64(o.epoch)})
	}
	for i, p := range r.nodes {
		var ends []time.Duration
		for _, e := range r.timeline {
			if e.Process == p.name && (e.Kind == EventExit || e.Kind == EventRestart) {
				ends = append(ends, e.At)
			}
		}
		for _, f := range r.faults {
			if f.Target == p.name && f.Kind == FaultKill {
				ends = append(ends, f.At)
			}
		}
		slices.Sort(ends)
		type step struct {
			at    time.Duration
			delta int64
		}
		var steps []step
		for _, reg := range r.w.regs[i] {
			from := reg.ok.Sub(r.start)
			to := time.Duration(-1)
			if !reg.removeInvoked.IsZero() {
				to = reg.removeInvoked.Sub(r.start)
			}
			if k, _ := slices.BinarySearch(ends, from); k < len(ends) && (to < 0 || ends[k] < to) {
				to = ends[k]
			}
			steps = append(steps, step{from, 1})
			if to >= 0 {
				steps = append(steps, step{to, -1})
			}
		}
		slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })
		n := int64(0)
		for _, s := range steps {
			n += s.delta
			out = append(out, TimelineEvent{At: s.at, Process: p.name, Kind: EventDispatchers, Value: n})
		}
	}
	return out
}

// check reads the logs and the workload's records and returns the result.
func (r *run) check(upgradeWall time.Duration) *Result {
	res := &Result{Seed: r.cfg.Seed, Nodes: r.cfg.Nodes, Tables: r.cfg.Tables, UpgradeWall: upgradeWall, Violations: []string{}}
	w := r.w
	res.EventsCommitted = w.committed.Load()
	for _, t := range w.tables {
		t.mu.Lock()
		res.EventsRead += t.read
		res.Lost += t.lost
		res.Duplicated += t.duplicated
		res.OutOfOrder += t.outOfOrder
		if acked := t.acked.Load(); t.lastRead < acked {
			res.Lost += int(acked - t.lastRead)
			r.violate("table %d: %d acknowledged events never read (read up to %d of %d)", t.id, acked-t.lastRead, t.lastRead, acked)
		}
		for _, p := range t.problems {
			r.violate("%s", p)
		}
		t.mu.Unlock()
	}
	// The drains, from the nodes' logs.
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range r.nodes {
		for _, l := range p.logLines(`"msg":"drain done"`) {
			var ll logLine
			if err := json.Unmarshal([]byte(l), &ll); err != nil {
				r.violate("%s: unreadable log line %q", p.name, l)
				continue
			}
			d := Drain{Node: p.name, Epoch: ll.Epoch, Complete: ll.Complete, Legacy: ll.Legacy, TookMS: ll.TookMS, At: time.Unix(0, ll.AtUnixNano)}
			res.Drains = append(res.Drains, d)
			how := "complete"
			if !d.Complete {
				how = "not complete"
				if d.Legacy {
					how = "legacy answer"
				}
			}
			r.mu.Lock()
			r.timeline = append(r.timeline, TimelineEvent{At: d.At.Sub(r.start), Process: p.name, Kind: EventDrainDone,
				Detail: fmt.Sprintf("%s, epoch %d, took %d ms", how, d.Epoch, d.TookMS), Value: d.TookMS})
			r.mu.Unlock()
			if !d.Complete {
				// The legacy answer (§9): a hard restart, knowingly, but
				// only while some legacy process is alive.
				r.mu.Lock()
				gone := r.legacyGone
				r.mu.Unlock()
				if d.Legacy && !gone.IsZero() && d.At.After(gone) {
					r.violate("%s (epoch %d) got the legacy answer at %s while no legacy process was alive (since %s)",
						p.name, d.Epoch, d.At.Format("15:04:05.000"), gone.Format("15:04:05.000"))
				}
				continue
			}
			// D5 at the gRPC boundary: no dispatcher of this process
			// registered (REGISTER answered OK for its epoch) without a
			// REMOVE sent before the drain completed.
			for _, reg := range w.regs[i] {
				if reg.epoch == d.Epoch && reg.invoked.Before(d.At) && (reg.removeInvoked.IsZero() || reg.removeInvoked.After(d.At)) {
					r.violate("drain of %s (epoch %d) completed at %s while dispatcher %s was registered (REGISTER ok at %s, no REMOVE before)",
						p.name, d.Epoch, d.At.Format("15:04:05.000"), reg.dispatcher, reg.ok.Format("15:04:05.000"))
				}
			}
		}
		res.Registrations += len(w.regs[i])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res.Violations = append(res.Violations, r.violations...)
	res.Faults = r.faults
	res.Restarts = r.restarts
	res.LinOps, res.LinOutcome = r.linOps, r.linOutcome
	res.TLSProbe = r.tlsProbe
	res.Wall = time.Since(r.start)
	res.Processes = []string{r.lc.name, r.coord.name}
	for _, p := range r.nodes {
		res.Processes = append(res.Processes, p.name)
	}
	for _, p := range append([]*proc{r.lc, r.coord}, r.nodes...) {
		for _, l := range p.logLines(`"msg":"bug site reached"`) {
			var b struct{ Bug string }
			if json.Unmarshal([]byte(l), &b) == nil && b.Bug != "" && !slices.Contains(res.BugsReached, b.Bug) {
				res.BugsReached = append(res.BugsReached, b.Bug)
			}
		}
	}
	slices.Sort(res.BugsReached)
	res.Timeline = append(r.timeline, r.observed()...)
	slices.SortStableFunc(res.Timeline, func(a, b TimelineEvent) int { return cmp.Compare(a.At, b.At) })
	return res
}
