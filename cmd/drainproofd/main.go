// Command drainproofd runs one process of a drainproof cluster: a node
// (an event service over a Pebble event store, with its liveness,
// heartbeats and maintainer), the coordinator (the drain controller), or
// the LogCoordinator. The processes talk gRPC (package transport); see
// docs/cluster.md.
//
//	drainproofd --role logcoord    --listen 127.0.0.1:7002
//	drainproofd --role coordinator --listen 127.0.0.1:7001 --logcoord 127.0.0.1:7002
//	drainproofd --role node --id n1 --listen 127.0.0.1:7101 --data-dir /var/lib/n1 \
//	    --coordinator 127.0.0.1:7001 --logcoord 127.0.0.1:7002
//
// SIGTERM (or SIGINT) on a node asks the coordinator to drain it and
// exits 0 only once the drain completed (or the coordinator gave the
// legacy answer); if --shutdown-timeout passes first it says so and exits
// 1. A bad flag or an unreachable peer: one line on stderr, exit 2.
// With --tls-ca, --tls-cert and --tls-key every connection is mutual
// TLS 1.3 and transport.Access decides who may call what
// (--operator-identity may drain any node).
// With --trace FILE the process writes its trace (docs/trace.md, schema
// 2, one process of a multi-process run; docs/cluster.md): every gRPC
// message carries the Lamport stamp of its sender's last line, and a
// restarted node, coordinator or LogCoordinator names its predecessor's
// trace with --trace-after.
// Built with -tags bugs, the variable DRAINPROOF_BUG switches on a bug
// of the zoo (package bugs).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/daemon"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/tla/names"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

type options struct {
	role, id, listen, advertise, coordinator, logcoord, dataDir, transport, httpAddr, readyFile, logLevel string
	tlsCA, tlsCert, tlsKey, operatorID, coordinatorID                                                     string
	traceFile, traceProcess, traceAfter, traceNode, traceModel, traceRestart, traceMapping                string
	version                                                                                               int
	diskFaults                                                                                            float64
	diskSeed                                                                                              uint64
	shutdownTimeout, ttl, memberTTL, heartbeat, schemaDelay, maintainerMove                               time.Duration
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("drainproofd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.role, "role", "", "node, coordinator or logcoord")
	fs.StringVar(&o.id, "id", "", "the node's name (role node)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "gRPC listen address")
	fs.StringVar(&o.advertise, "advertise", "", "address peers dial (the listen address if empty)")
	fs.StringVar(&o.coordinator, "coordinator", "", "the coordinator's address (role node)")
	fs.StringVar(&o.logcoord, "logcoord", "", "the LogCoordinator's address (transport logcoord)")
	fs.StringVar(&o.dataDir, "data-dir", "", "the node's data directory (Pebble event store, epoch)")
	fs.StringVar(&o.transport, "transport", "logcoord", "where broker counts travel: logcoord or heartbeat")
	fs.StringVar(&o.httpAddr, "http", "", "listen address of /metrics and /healthz (none if empty)")
	fs.StringVar(&o.readyFile, "ready-file", "", "write the gRPC and HTTP addresses here once serving")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&o.version, "version", int(node.VersionBrokerDrain), "drain protocol version the node announces: 0 legacy, 1, 2")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 60*time.Second, "how long SIGTERM waits for the drain (role node)")
	fs.DurationVar(&o.ttl, "ttl", time.Second, "the LogCoordinator cache's TTL (role logcoord)")
	fs.DurationVar(&o.memberTTL, "member-ttl", 3*time.Second, "silence after which the coordinator removes a node")
	fs.DurationVar(&o.heartbeat, "heartbeat", 200*time.Millisecond, "the node's heartbeat period")
	fs.DurationVar(&o.schemaDelay, "schema-delay", 0, "RegisterTable takes up to this long one call in eight, up to a tenth of it otherwise (schema resolution; 0: none)")
	fs.Float64Var(&o.diskFaults, "disk-faults", 0, "fail each write batch's Set or Commit with this probability (injected disk errors; 0..1)")
	fs.Uint64Var(&o.diskSeed, "disk-seed", 1, "seed of the injected disk errors")
	fs.DurationVar(&o.maintainerMove, "maintainer-move", 0, "how long the maintainer takes to move its work off a DRAINING node")
	fs.StringVar(&o.tlsCA, "tls-ca", "", "PEM file of the CA every peer's certificate must be signed by (mutual TLS with --tls-cert and --tls-key)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM file of this process's certificate (a node's names its --id)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM file of the certificate's private key")
	fs.StringVar(&o.operatorID, "operator-identity", "", "with TLS: the certificate identity (subject CN or URI SAN) that may start any node's drain")
	fs.StringVar(&o.coordinatorID, "coordinator-identity", "coordinator", "with TLS: the coordinator's certificate identity (its commands and queries)")
	fs.StringVar(&o.traceFile, "trace", "", "write this process's trace (docs/trace.md, schema 2) to this file")
	fs.StringVar(&o.traceProcess, "trace-process", "", "with --trace: the process's name in the run (default coord, logcoord, or the node's --id)")
	fs.StringVar(&o.traceAfter, "trace-after", "", "with --trace: the trace file of the process this one succeeds (a restarted node, coordinator or LogCoordinator)")
	fs.StringVar(&o.traceNode, "trace-node", "", "with --trace (coordinator, logcoord): the node whose drain is traced")
	fs.StringVar(&o.traceModel, "trace-model", "", "with --trace: the trace header's model constants, a JSON object")
	fs.StringVar(&o.traceRestart, "trace-restart", "", "with --trace-after: why the process was restarted, crash or upgrade (a node's first line: NodeCrashRestart or UpgradeRestart; a LogCoordinator's, crash only: its empty cache, LogCoordExpire; a coordinator's, crash only: the traced node's join, CoordRejoin)")
	fs.StringVar(&o.traceMapping, "trace-mapping", "", "with --trace: the refinement mapping the header names (sessions, or none)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch o.role {
	case "node":
		if o.id == "" || o.coordinator == "" || o.dataDir == "" {
			return nil, errors.New("--role node needs --id, --coordinator and --data-dir")
		}
		if o.version < 0 || o.version > int(node.VersionBrokerDrain) {
			return nil, fmt.Errorf("--version %d: want 0, 1 or 2", o.version)
		}
	case "coordinator", "logcoord":
	default:
		return nil, fmt.Errorf("--role %q: want node, coordinator or logcoord", o.role)
	}
	if o.diskFaults < 0 || o.diskFaults > 1 {
		return nil, fmt.Errorf("--disk-faults %v: want a probability in 0..1", o.diskFaults)
	}
	if _, err := node.ParseTransport(o.transport); err != nil {
		return nil, fmt.Errorf("--transport: %w", err)
	}
	if o.transport == string(node.TransportLogCoord) && o.role != "logcoord" && o.logcoord == "" {
		return nil, fmt.Errorf("--role %s with --transport logcoord needs --logcoord", o.role)
	}
	if n := countSet(o.tlsCA, o.tlsCert, o.tlsKey); n != 0 && n != 3 {
		return nil, errors.New("--tls-ca, --tls-cert and --tls-key go together")
	}
	if o.tlsCA == "" && o.operatorID != "" {
		return nil, errors.New("--operator-identity needs TLS (--tls-ca, --tls-cert, --tls-key)")
	}
	if err := o.checkTrace(); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"shutdown-timeout", o.shutdownTimeout}, {"ttl", o.ttl}, {"member-ttl", o.memberTTL}, {"heartbeat", o.heartbeat}} {
		if d.v <= 0 {
			return nil, fmt.Errorf("--%s %v: want a positive duration", d.name, d.v)
		}
	}
	return o, nil
}

// checkTrace checks the --trace flags.
func (o *options) checkTrace() error {
	if o.traceFile == "" {
		if countSet(o.traceProcess, o.traceAfter, o.traceNode, o.traceModel, o.traceRestart, o.traceMapping) != 0 {
			return errors.New("--trace-process, --trace-after, --trace-node, --trace-model, --trace-restart and --trace-mapping need --trace")
		}
		return nil
	}
	if o.traceModel == "" {
		return errors.New("--trace needs --trace-model")
	}
	switch {
	case o.role == "node" && o.traceNode != "":
		return errors.New("--trace-node is for --role coordinator or logcoord (a node traces itself)")
	case o.role != "node" && o.traceNode == "":
		return fmt.Errorf("--role %s with --trace needs --trace-node", o.role)
	case o.role != "node" && o.traceRestart == "upgrade":
		return fmt.Errorf("--trace-restart upgrade is for --role node (a %s is restarted only after a crash)", o.role)
	}
	if (o.traceAfter == "") != (o.traceRestart == "") {
		return errors.New("--trace-after and --trace-restart go together")
	}
	if o.traceRestart != "" && o.traceRestart != "crash" && o.traceRestart != "upgrade" {
		return fmt.Errorf("--trace-restart %q: want crash or upgrade", o.traceRestart)
	}
	if o.traceMapping != "" && o.traceMapping != trace.MappingSessions {
		return fmt.Errorf("--trace-mapping %q: want %s or none", o.traceMapping, trace.MappingSessions)
	}
	if o.traceProcess == "" {
		o.traceProcess = map[string]string{"coordinator": "coord", "logcoord": "logcoord", "node": o.id}[o.role]
	}
	if strings.ContainsAny(o.traceProcess, " \"\\\n") {
		return fmt.Errorf("--trace-process %q: no spaces, quotes or backslashes", o.traceProcess)
	}
	return nil
}

// openTrace creates the process's trace file and writes its header: the
// model of --trace-model, and, after a predecessor (--trace-after), its
// name and a clock past its last line. A predecessor killed by SIGKILL
// left every line that sent a message (the writer writes those
// through), so its last line on disk is the last one another process
// can depend on.
func openTrace(o *options) (*trace.Writer, error) {
	if o.traceFile == "" {
		return nil, nil
	}
	var model map[string]any
	if err := json.Unmarshal([]byte(o.traceModel), &model); err != nil || model == nil {
		return nil, fmt.Errorf("--trace-model: want a JSON object of the model's constants (%v)", err)
	}
	h := trace.Header{Model: model, Process: o.traceProcess, Source: "drainproofd --role " + o.role, Mapping: o.traceMapping}
	var carried []trace.Stamp
	if o.traceAfter != "" {
		proc, clock, err := lastStamp(o.traceAfter)
		if err != nil {
			return nil, fmt.Errorf("--trace-after: %w", err)
		}
		if proc == o.traceProcess {
			return nil, fmt.Errorf("--trace-after %s is process %q's own trace: a successor needs its own --trace-process", o.traceAfter, proc)
		}
		h.After, h.Clock = proc, clock
		if carried, err = readCarry(o.traceAfter + carrySuffix); err != nil {
			return nil, fmt.Errorf("--trace-after: %w", err)
		}
	}
	f, err := os.OpenFile(o.traceFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	w, err := trace.NewWriter(f, h)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--trace %s: %w", o.traceFile, err)
	}
	if o.traceRestart != "" && o.role == "node" {
		// The new process's first line: the model's restart of T (its
		// new process, of the new version). An upgrade depends on the
		// coordinator's decision, which the predecessor received and
		// carried (writeCarry) if no line of its own took it.
		a := names.NodeCrashRestart
		if o.traceRestart == "upgrade" {
			a = names.UpgradeRestart
		}
		w.Trace(&trace.Line{Action: a, V: "new", From: carried})
	}
	return w, nil
}

// carrySuffix names the file, beside a node's trace, that holds the
// stamps the process received and no line of its own took when it exited
// (trace.Writer.Pending): its successor's restart line depends on them
// (the coordinator's drain decision that authorised the restart).
const carrySuffix = ".carry"

// writeCarry writes w's pending stamps beside its trace file.
func writeCarry(path string, w *trace.Writer) error {
	var b strings.Builder
	for _, s := range w.Pending() {
		b.WriteString(transport.FormatStamp(s) + "\n")
	}
	return os.WriteFile(path+carrySuffix, []byte(b.String()), 0o644)
}

// readCarry reads a predecessor's carried stamps (none if it left no
// file: a killed process carries nothing).
func readCarry(path string) ([]trace.Stamp, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []trace.Stamp
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		s, err := transport.ParseStamp(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// lastStamp returns the process of a trace file's header and the clock
// of its last complete line (the header's clock, 0, if it has none). A
// line cut short by a kill is not complete and not counted.
func lastStamp(path string) (string, uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	var proc string
	var clock uint64
	for i, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasSuffix(l, "\n") {
			break // a torn last line
		}
		if i == 0 {
			var h struct {
				Process string `json:"process"`
			}
			if err := json.Unmarshal([]byte(l), &h); err != nil || h.Process == "" {
				return "", 0, fmt.Errorf("%s:1: not the header of a process's trace", path)
			}
			proc = h.Process
			continue
		}
		var st struct {
			C uint64 `json:"c"`
		}
		if err := json.Unmarshal([]byte(l), &st); err != nil || st.C == 0 {
			return "", 0, fmt.Errorf("%s:%d: not a stamped trace line", path, i+1)
		}
		clock = max(clock, st.C)
	}
	if proc == "" {
		return "", 0, fmt.Errorf("%s: no header", path)
	}
	return proc, clock, nil
}

func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// security returns the process's gRPC server and dial options: mutual
// TLS and the access rules when the certificate flags are given, none
// otherwise.
func security(o *options) ([]grpc.ServerOption, []grpc.DialOption, error) {
	if o.tlsCA == "" {
		return nil, nil, nil
	}
	t, err := transport.LoadTLS(o.tlsCA, o.tlsCert, o.tlsKey)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case o.role == "node" && !t.Identity.Is(o.id):
		return nil, nil, fmt.Errorf("--tls-cert %s names %q, not the node's --id %q", o.tlsCert, t.Identity, o.id)
	case o.role == "coordinator" && !t.Identity.Is(o.coordinatorID):
		return nil, nil, fmt.Errorf("--tls-cert %s names %q, not the --coordinator-identity %q", o.tlsCert, t.Identity, o.coordinatorID)
	}
	a := transport.Access{Operator: o.operatorID, Coordinator: o.coordinatorID}
	return t.ServerOptions(a), []grpc.DialOption{t.DialOption()}, nil
}

func run(args []string, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "drainproofd: %v\n", err)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(stderr, "drainproofd: --log-level %q: want debug, info, warn or error\n", o.logLevel)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	if name, err := bugs.FromEnv(); err != nil {
		fmt.Fprintf(stderr, "drainproofd: %v\n", err)
		return 2
	} else if name != "" {
		log.Warn("bug switched on", "bug", name)
		// A cluster run tells a bug it missed from one whose code never
		// ran (checker bugs --cluster) by this line.
		bugs.OnReach(func(name string) { log.Warn("bug site reached", "bug", name) })
	}
	srvOpts, dialOpts, err := security(o)
	if err != nil {
		fmt.Fprintf(stderr, "drainproofd: %s\n", oneLine(err.Error()))
		return 2
	}
	// A peer that floods malformed messages is held to TarpitRate a
	// second (BenchmarkFlood in impl/transport).
	srvOpts = append(srvOpts, grpc.ChainUnaryInterceptor(transport.NewTarpit(transport.TarpitRate, transport.TarpitBurst).Interceptor()))
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		fmt.Fprintf(stderr, "drainproofd: --listen %s: %v\n", o.listen, err)
		return 2
	}
	defer lis.Close()
	var httpLis net.Listener
	if o.httpAddr != "" {
		if httpLis, err = net.Listen("tcp", o.httpAddr); err != nil {
			fmt.Fprintf(stderr, "drainproofd: --http %s: %v\n", o.httpAddr, err)
			return 2
		}
		defer httpLis.Close()
	}
	// The trace is created once the listeners are: a start that finds its
	// port taken (the cluster harness tries again) leaves no trace file.
	tw, err := openTrace(o)
	if err != nil {
		fmt.Fprintf(stderr, "drainproofd: %s\n", oneLine(err.Error()))
		return 2
	}
	if tw != nil {
		defer func() {
			if err := tw.Close(); err != nil {
				log.Error("writing the trace", "file", o.traceFile, "err", err.Error())
			}
		}()
	}
	metrics := daemon.NewMetrics()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	healthy := func() bool { return true }
	var stopHTTP func()
	serveHTTP := func() {
		if httpLis != nil {
			h := daemon.ServeHTTP(httpLis, metrics, healthy)
			stopHTTP = h.Close
		}
	}
	ready := func() error {
		if o.readyFile == "" {
			return nil
		}
		h := ""
		if httpLis != nil {
			h = httpLis.Addr().String()
		}
		tmp := o.readyFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(lis.Addr().String()+" "+h+"\n"), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, o.readyFile)
	}
	defer func() {
		if stopHTTP != nil {
			stopHTTP()
		}
	}()
	// The coordinator and the LogCoordinator serve until a signal; a node
	// drains first (below).
	var closer interface{ Close() }
	var startErr error
	switch o.role {
	case "logcoord":
		closer, startErr = daemon.StartLogCoord(daemon.LogCoordConfig{Listener: lis, TTL: o.ttl, Logger: log, ServerOptions: srvOpts,
			Tracer: tw, TraceNode: node.ID(o.traceNode), TraceRestart: o.traceAfter != ""})
	case "coordinator":
		closer, startErr = daemon.StartCoordinator(daemon.CoordinatorConfig{Listener: lis, Transport: node.Transport(o.transport),
			LogCoord: o.logcoord, MemberTTL: o.memberTTL, Logger: log, Metrics: metrics, ServerOptions: srvOpts, DialOptions: dialOpts,
			Tracer: tw, TraceNode: node.ID(o.traceNode), TraceRestart: o.traceAfter != ""})
	}
	if o.role != "node" {
		if startErr != nil {
			fmt.Fprintf(stderr, "drainproofd: %v\n", startErr)
			return 2
		}
		defer closer.Close()
		serveHTTP()
		if err := ready(); err != nil {
			fmt.Fprintf(stderr, "drainproofd: --ready-file: %v\n", err)
			return 2
		}
		<-sig
		return 0
	}
	n, err := daemon.StartNode(daemon.NodeConfig{ID: node.ID(o.id), Listener: lis, Advertise: o.advertise,
		Coordinator: o.coordinator, LogCoord: o.logcoord, DataDir: o.dataDir, Version: node.Version(o.version),
		Transport: node.Transport(o.transport), HeartbeatEvery: o.heartbeat, SchemaDelay: o.schemaDelay, MaintainerMove: o.maintainerMove, DiskFaults: o.diskFaults, DiskSeed: o.diskSeed, Logger: log, Metrics: metrics,
		ServerOptions: srvOpts, DialOptions: dialOpts, Tracer: tw})
	if err != nil {
		fmt.Fprintf(stderr, "drainproofd: %s\n", oneLine(strings.TrimPrefix(err.Error(), "daemon: ")))
		return 2
	}
	healthy = func() bool { return n.Liveness() != node.Stopping }
	serveHTTP()
	if err := ready(); err != nil {
		_ = n.Close()
		fmt.Fprintf(stderr, "drainproofd: --ready-file: %v\n", err)
		return 2
	}
	<-sig
	log.Info("SIGTERM: draining", "epoch", n.Epoch(), "timeout", o.shutdownTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	res, derr := n.Drain(ctx, 50*time.Millisecond)
	cancel()
	code := 0
	if derr != nil {
		log.Error("shutdown timeout: the drain did not complete", "epoch", n.Epoch(), "err", derr.Error())
		code = 1
	} else {
		log.Info("drain done", "epoch", n.Epoch(), "complete", res.Complete, "legacy", res.Legacy,
			"drained_epoch", res.DrainedEpoch, "took_ms", res.Took.Milliseconds(), "at_unix_nano", time.Now().UnixNano())
	}
	if err := n.Close(); err != nil {
		log.Error("closing the event store", "err", err.Error())
		code = 1
	}
	if tw != nil {
		if err := writeCarry(o.traceFile, tw); err != nil {
			log.Error("writing the trace's carried stamps", "err", err.Error())
			code = 1
		}
	}
	return code
}

// oneLine joins the lines of a joined error into one.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }
