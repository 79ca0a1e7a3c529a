package cluster

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestProxyHoldDeliversAfterClose: bytes a held connection sends reach
// the target only at release, although their client closed the
// connection before.
func TestProxyHoldDeliversAfterClose(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	got := make(chan string, 1)
	go func() {
		c, err := target.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	x, err := newProxy(target.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	c, err := net.Dial("tcp", x.addr())
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		x.mu.Lock()
		n := len(x.conns)
		x.mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	x.hold(10 * time.Second)
	if _, err := c.Write([]byte("old epoch")); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	select {
	case s := <-got:
		t.Fatalf("the target got %q before the release", s)
	case <-time.After(300 * time.Millisecond):
	}
	x.release()
	select {
	case s := <-got:
		if s != "old epoch" {
			t.Fatalf("the target got %q, want the held bytes", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held bytes never arrived")
	}
}

// TestRunCatchesAcceptStaleEpoch: with the coordinator applying messages
// of an older epoch (F3), FaultStale's held heartbeat of a killed
// DRAINING process makes the coordinator see its successor DRAINING while
// it is ALIVE, and the run says so.
func TestRunCatchesAcceptStaleEpoch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	res, err := Run(context.Background(), Config{Binary: bins.bugs, Nodes: 3, Seed: 1, Duration: 8 * time.Second,
		Upgrade: true, Faults: []string{FaultStale}, DrainBound: 5 * time.Second, Env: []string{"DRAINPROOF_BUG=AcceptStaleEpoch"}})
	if err != nil {
		t.Fatal(err)
	}
	caught := false
	for _, v := range res.Violations {
		caught = caught || strings.Contains(v, "stale observation")
	}
	if !caught {
		t.Fatalf("AcceptStaleEpoch not caught; violations %q", res.Violations)
	}
	checkNothingLeft(t, res)
}

// TestRunTLS: a short run with mutual TLS between every process passes,
// and its access probe ran: a non-operator's drain was refused
// (PermissionDenied) and a REGISTER without a certificate failed.
func TestRunTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	res, err := Run(context.Background(), Config{Binary: bins.plain, Nodes: 3, Seed: 1, Duration: 4 * time.Second, Upgrade: true, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("violations: %q", res.Violations)
	}
	if !strings.Contains(res.TLSProbe, "drain: PermissionDenied") || !strings.Contains(res.TLSProbe, "certificate: Unavailable") {
		t.Fatalf("TLS probe %q", res.TLSProbe)
	}
	checkNothingLeft(t, res)
}
