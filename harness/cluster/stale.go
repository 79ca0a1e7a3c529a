package cluster

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// FaultStale delays a draining node's last messages to the coordinator
// past its restart: once a node the upgrade drains is DRAINING or
// STOPPING, its connections to the coordinator are held (proxy.hold)
// for 1.5–2.5 s, it is SIGKILLed 250 ms later (its heartbeats of that
// epoch, DRAINING or STOPPING, are in the held bytes), and the upgrade
// restarts it and drains it again. The held heartbeats reach the
// coordinator after the new process joined: messages of an older epoch
// that the coordinator must drop (D2, F3).
const FaultStale = "stale"

// killStart SIGKILLs p's process group if p's current process is still
// its start number start, and waits for it; false if another process
// (or none) runs.
func (p *proc) killStart(start int) bool {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd == nil || p.starts != start {
		p.mu.Unlock()
		return false
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	p.mu.Unlock()
	<-exited
	return true
}

// injectStale is FaultStale: it waits up to 3 s for a node the upgrade is
// draining to be DRAINING or STOPPING, holds its messages to the
// coordinator, kills it, and releases them as soon as the upgrade has
// restarted it (its new epoch joined: a start returns once the process
// serves, after its join), before the upgrade's SIGTERM drains the new
// process. Once per node and run.
func (r *run) injectStale(ctx context.Context, end time.Time) {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && time.Now().Before(end) && ctx.Err() == nil; {
		for i, p := range r.nodes {
			r.mu.Lock()
			busy, done := r.draining[i], r.staled[i]
			r.mu.Unlock()
			if !busy || done {
				continue
			}
			p.mu.Lock()
			start := p.starts
			p.mu.Unlock()
			cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			st, err := pb.NewEventServiceClient(r.w.conns[i]).Status(cctx, &pb.StatusRequest{})
			cancel()
			if err != nil || st.GetLiveness() == pb.Liveness_ALIVE {
				continue
			}
			r.mu.Lock()
			r.staled[i] = true
			r.mu.Unlock()
			x := r.toCoord[i]
			x.hold(10 * time.Second)
			sleep(ctx, 250*time.Millisecond) // its next heartbeats are held
			if !p.killStart(start) {
				x.release()
				return
			}
			t0 := time.Now()
			for time.Since(t0) < 8*time.Second && ctx.Err() == nil {
				p.mu.Lock()
				restarted := p.starts > start && p.cmd != nil
				p.mu.Unlock()
				if restarted {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			x.release()
			r.record(FaultStale, p.name, fmt.Sprintf("epoch %d %v: its messages to the coordinator held past a SIGKILL and its restart (%v)",
				st.GetEpoch(), st.GetLiveness(), time.Since(t0).Round(time.Millisecond)))
			return
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

// watchObservations checks, every 200 ms until ctx ends, that the
// coordinator never observes a node ahead of the node itself: a member
// whose epoch is the node process's own must not have a liveness the
// process has not reached (NoStaleObservation, D2). The coordinator is
// read before the node, and a process's liveness only rises within its
// epoch, so a correct coordinator never fails this.
func (r *run) watchObservations(ctx context.Context, dial []grpc.DialOption) {
	conn, err := transport.Dial(r.coord.addr(), dial...)
	if err != nil {
		r.violate("observation watch: %v", err)
		return
	}
	defer conn.Close()
	co := pb.NewCoordinatorClient(conn)
	seen := map[string]bool{}
	for ctx.Err() == nil {
		sleep(ctx, 200*time.Millisecond)
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		ms, err := co.Members(cctx, &pb.MembersRequest{})
		cancel()
		if err != nil {
			continue
		}
		for _, m := range ms.GetMembers() {
			i := -1
			for j, p := range r.nodes {
				if p.name == m.GetNode() {
					i = j
				}
			}
			if i < 0 || m.GetLiveness() == pb.Liveness_ALIVE {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			st, err := pb.NewEventServiceClient(r.w.conns[i]).Status(cctx, &pb.StatusRequest{})
			cancel()
			if err != nil || st.GetEpoch() != m.GetEpoch() || st.GetLiveness() >= m.GetLiveness() {
				continue
			}
			key := fmt.Sprintf("%s/%d", m.GetNode(), m.GetEpoch())
			if !seen[key] {
				seen[key] = true
				r.violate("the coordinator observes %s (epoch %d) %v while the process is %v: a stale observation (D2; a message of an older epoch applied)",
					m.GetNode(), m.GetEpoch(), m.GetLiveness(), st.GetLiveness())
			}
		}
	}
}
