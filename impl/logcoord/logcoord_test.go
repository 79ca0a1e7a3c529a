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

// An entry is dated by the arrival of the newest sample the cache has had,
// not of whatever arrives last (TiCDC #6155): an older report of the same
// process delivered late, or a late copy of the newest one, does not keep
// the entry fresh (nor, the entry being closed, change its value), so the
// entry still expires a TTL after its newest sample arrived. While the
// entry is open the model's L2 lets any report replace the value, an
// older one too, but its age stays the newest sample's. Under the bug RefreshOnOlderReport
// the late report refreshes the entry and the coordinator is answered
// with a stale value past the TTL.
func TestOlderReportDoesNotRefresh(t *testing.T) {
	seq := func(r node.Report, s uint64) node.Report { r.Seq = s; return r }
	for _, tc := range []struct {
		name string
		late node.Report
	}{
		{"older sample, numbered", seq(rep(1, 2, false), 1)},
		{"late copy of the newest sample", seq(rep(1, 0, true), 2)},
		{"older sample, unnumbered: open after closed", rep(1, 2, false)},
		{"older sample, unnumbered: a higher closed count", rep(1, 1, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := logcoord.New(logcoord.Config{TTL: 10})
			newest := seq(rep(1, 0, true), 2)
			if tc.late.Seq == 0 {
				newest.Seq = 0
			}
			c.OnReport(newest, 0)
			if c.OnReport(tc.late, 8) {
				t.Fatal("a late older report changed the cached value")
			}
			if a := c.Answer("T", 11); a.Known {
				t.Fatalf("Answer at 11 = %+v: the entry's newest sample arrived at 0, TTL 10; the late report at 8 refreshed it", a)
			}
		})
	}
}

// An open entry's value follows any report (L2), an older one delivered
// late too, but that report does not refresh the entry's age.
func TestOlderReportReplacesAnOpenValueButNotItsAge(t *testing.T) {
	seq := func(r node.Report, s uint64) node.Report { r.Seq = s; return r }
	c := logcoord.New(logcoord.Config{TTL: 10})
	c.OnReport(seq(rep(1, 2, false), 2), 0)
	if !c.OnReport(seq(rep(1, 1, false), 1), 8) {
		t.Fatal("L2: any report replaces an open entry's value")
	}
	if a := c.Answer("T", 11); a.Known {
		t.Fatalf("Answer at 11 = %+v: the older report at 8 refreshed the entry", a)
	}
}

// A newer sample refreshes the entry even when its value is unchanged
// (the service's periodic re-report keeps a live node's entry); a
// numbered report's value stays monotone.
func TestNewerReportRefreshes(t *testing.T) {
	seq := func(r node.Report, s uint64) node.Report { r.Seq = s; return r }
	c := logcoord.New(logcoord.Config{TTL: 10})
	c.OnReport(seq(rep(1, 0, true), 1), 0)
	if c.OnReport(seq(rep(1, 0, true), 2), 8) {
		t.Fatal("an unchanged value reported as changed")
	}
	if a := c.Answer("T", 15); !a.Known || a.Count != 0 || !a.AdmissionClosed {
		t.Fatalf("Answer at 15 = %+v: the re-report at 8 must keep the entry", a)
	}
	c.OnReport(seq(rep(1, 3, true), 3), 9) // newer, but a closed count never rises
	if a := c.Answer("T", 15); a.Count != 0 {
		t.Fatalf("Answer = %+v: the closed count rose", a)
	}
	c.OnReport(rep(1, 0, true), 12) // unnumbered, equal value: a re-send, refreshes
	if a := c.Answer("T", 21); !a.Known {
		t.Fatalf("Answer at 21 = %+v: the unnumbered re-report at 12 must keep the entry", a)
	}
}
