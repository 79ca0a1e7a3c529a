package logcoord_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs)
// and checks for leaked goroutines.
func TestMain(m *testing.M) {
	bugs.SetupTest("logcoord")
	goleak.VerifyTestMain(m)
}

func rep(e uint64, c int64, closed bool) node.Report {
	return node.Report{From: "T", Epoch: e, Count: c, AdmissionClosed: closed}
}

// TestCache is L2–L4 with the model's monotone cache
// (LogCoordRecvReport, LogCoordAnswer, LogCoordExpire).
func TestCache(t *testing.T) {
	cases := []struct {
		name    string
		reports []node.Report
		want    logcoord.Answer
	}{
		{"nothing cached: unknown", nil, logcoord.Unknown("T")},
		{"open then closed", []node.Report{rep(1, 2, false), rep(1, 1, true)}, logcoord.Answer{Target: "T", Known: true, Epoch: 1, Count: 1, AdmissionClosed: true}},
		{"closed never replaced by open", []node.Report{rep(1, 1, true), rep(1, 0, false)}, logcoord.Answer{Target: "T", Known: true, Epoch: 1, Count: 1, AdmissionClosed: true}},
		{"closed count only falls (F8)", []node.Report{rep(1, 0, true), rep(1, 3, true)}, logcoord.Answer{Target: "T", Known: true, Epoch: 1, Count: 0, AdmissionClosed: true}},
		{"newer epoch replaces", []node.Report{rep(1, 0, true), rep(2, 4, false)}, logcoord.Answer{Target: "T", Known: true, Epoch: 2, Count: 4}},
		{"older epoch dropped (F3)", []node.Report{rep(2, 4, false), rep(1, 0, true)}, logcoord.Answer{Target: "T", Known: true, Epoch: 2, Count: 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := logcoord.New(logcoord.Config{TTL: 10})
			for i, r := range tc.reports {
				c.OnReport(r, int64(i))
			}
			if got := c.Answer("T", 5); got != tc.want {
				t.Fatalf("Answer = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestExpiryAndLeave: an entry not refreshed for the TTL answers unknown
// (L3), a refresh keeps it, and a node leaving drops it (L4).
func TestExpiryAndLeave(t *testing.T) {
	c := logcoord.New(logcoord.Config{TTL: 10})
	c.OnReport(rep(1, 0, true), 0)
	c.OnReport(rep(1, 0, true), 8) // refresh, same value
	if a := c.Answer("T", 15); !a.Known {
		t.Fatal("refreshed entry expired")
	}
	if a := c.Answer("T", 19); a.Known {
		t.Fatal("entry did not expire")
	}
	c.OnReport(rep(2, 1, false), 20)
	c.RemoveNode("T")
	if a := c.Answer("T", 20); a.Known {
		t.Fatal("entry kept after the node left")
	}
	c.OnReport(rep(3, 1, false), 30)
	if n := c.Expire(50); n != 1 {
		t.Fatalf("Expire removed %d", n)
	}
}
