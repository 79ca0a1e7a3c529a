package logcoord_test

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
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

// TestAnswerAndExpireAgreeAtTheTTL: an entry is fresh up to and including
// TTL ticks after its last refresh and expired one tick later, and the
// query path (Answer) and the sweep (Expire) draw that line at the same
// tick: an answer at exactly the TTL is known, as Expire at that tick
// keeps the entry, and one tick later the answer is unknown, as Expire
// would have dropped it. Were they to disagree, the coordinator's view of
// a node would depend on whether a sweep ran before its query.
func TestAnswerAndExpireAgreeAtTheTTL(t *testing.T) {
	const ttl = 10
	for _, age := range []int64{ttl - 1, ttl, ttl + 1} {
		fresh := age <= ttl
		answered := logcoord.New(logcoord.Config{TTL: ttl})
		answered.OnReport(rep(1, 0, true), 100)
		if a := answered.Answer("T", 100+age); a.Known != fresh {
			t.Errorf("age %d: Answer known = %v, want %v", age, a.Known, fresh)
		}
		swept := logcoord.New(logcoord.Config{TTL: ttl})
		swept.OnReport(rep(1, 0, true), 100)
		wantDropped := 1
		if fresh {
			wantDropped = 0
		}
		dropped := swept.Expire(100 + age)
		if _, kept := swept.Entry("T"); kept != fresh || dropped != wantDropped {
			t.Errorf("age %d: Expire dropped %d and kept the entry: %v; want kept %v", age, dropped, kept, fresh)
		}
	}
}

// TestZeroTTLNeverExpires: with TTL 0 an entry never expires by age, in
// Answer and in Expire alike; only the node leaving membership drops it.
func TestZeroTTLNeverExpires(t *testing.T) {
	c := logcoord.New(logcoord.Config{})
	c.OnReport(rep(1, 2, true), 0)
	if n := c.Expire(1 << 40); n != 0 {
		t.Fatalf("Expire with TTL 0 dropped %d entries", n)
	}
	if a := c.Answer("T", 1<<40); !a.Known || a.Count != 2 {
		t.Fatalf("Answer with TTL 0 = %+v, want the cached count 2", a)
	}
}

// TestOnReportSaysWhetherTheEntryTookTheReport: OnReport's answer is
// whether the entry took the report's value. A closed entry takes only a
// lower count, so the same closed count again is no change, though it
// refreshes the entry's time (the process is alive).
func TestOnReportSaysWhetherTheEntryTookTheReport(t *testing.T) {
	c := logcoord.New(logcoord.Config{TTL: 10})
	steps := []struct {
		r    node.Report
		at   int64
		took bool
	}{
		{rep(1, 2, false), 0, true},  // the first report
		{rep(1, 2, false), 1, true},  // admission open: every report of the epoch
		{rep(1, 1, true), 2, true},   // open to closed
		{rep(1, 1, true), 9, false},  // the same closed count: a refresh only
		{rep(1, 2, true), 10, false}, // a closed count never rises
		{rep(1, 0, false), 11, false},
		{rep(1, 0, true), 12, true},  // a lower closed count
		{rep(0, 0, true), 13, false}, // an older epoch
		{rep(2, 3, false), 14, true}, // a newer epoch
	}
	for i, s := range steps {
		if got := c.OnReport(s.r, s.at); got != s.took {
			t.Fatalf("step %d, %+v: OnReport = %v, want %v", i, s.r, got, s.took)
		}
	}
	// A report the entry does not take still refreshes its time.
	c2 := logcoord.New(logcoord.Config{TTL: 10})
	c2.OnReport(rep(1, 1, true), 0)
	c2.OnReport(rep(1, 1, true), 9)
	if a := c2.Answer("T", 19); !a.Known || a.Count != 1 {
		t.Fatalf("Answer at 19 = %+v; want the closed count 1, refreshed at 9", a)
	}
}

// TestTraceFollowsTraceNode: with a Tracer, the cache writes the model's
// actions about TraceNode only, each with the node's entry after it; with
// TraceNode empty, about every node.
func TestTraceFollowsTraceNode(t *testing.T) {
	actions := func(traceNode node.ID) []string {
		var lines trace.Lines
		c := logcoord.New(logcoord.Config{TTL: 10, Tracer: &lines, TraceNode: traceNode})
		c.OnReport(rep(1, 2, true), 0)
		c.OnReport(node.Report{From: "P", Epoch: 1}, 0)
		c.Answer("P", 1)
		c.Answer("T", 1)
		c.Answer("T", 20) // expired: LogCoordExpire, then unknown
		var out []string
		for _, l := range lines.All() {
			out = append(out, string(trace.AppendLine(nil, &l)))
		}
		return out
	}
	const (
		entry = `"vars":{"cache":{"epoch":1,"count":2,"closed":true}}}`
		none  = `"vars":{"cache":{"epoch":-1,"count":-1,"closed":false}}}`
		sent  = `{"kind":"report","epoch":1,"liveness":"NONE","count":2,"closed":true}`
		ans   = `{"kind":"ans","epoch":1,"liveness":"NONE","count":2,"closed":true}`
		unk   = `{"kind":"ans","epoch":-1,"liveness":"NONE","count":-1,"closed":false}`
		query = `{"kind":"query","epoch":-1,"liveness":"NONE","count":-1,"closed":false}`
	)
	// An answer takes the coordinator's query (m) and replies (reply).
	want := []string{
		`{"action":"LogCoordRecvReport","params":{"m":` + sent + `},` + entry,
		`{"action":"LogCoordAnswer","params":{"m":` + query + `,"reply":` + ans + `},` + entry,
		`{"action":"LogCoordExpire",` + none,
		`{"action":"LogCoordAnswerUnknown","params":{"m":` + query + `,"reply":` + unk + `},` + none,
	}
	if got := actions("T"); !slices.Equal(got, want) {
		t.Fatalf("trace of T:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := actions(""); len(got) != 6 { // and P's report and answer
		t.Fatalf("trace of every node: %d lines, want 6:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestTraceRestartIsTheEmptyCache: a LogCoordinator that succeeds a
// killed one writes, as its first line, the traced node's entry gone
// (LogCoordExpire with no entry); without a traced node it writes
// nothing.
func TestTraceRestartIsTheEmptyCache(t *testing.T) {
	var lines trace.Lines
	logcoord.New(logcoord.Config{TTL: 10, Tracer: &lines, TraceNode: "T"}).TraceRestart()
	var got []string
	for _, l := range lines.All() {
		got = append(got, string(trace.AppendLine(nil, &l)))
	}
	want := []string{`{"action":"LogCoordExpire","vars":{"cache":{"epoch":-1,"count":-1,"closed":false}}}`}
	if !slices.Equal(got, want) {
		t.Fatalf("TraceRestart wrote:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var none trace.Lines
	logcoord.New(logcoord.Config{TTL: 10, Tracer: &none}).TraceRestart()
	if n := len(none.All()); n != 0 {
		t.Fatalf("TraceRestart without a TraceNode wrote %d lines, want 0", n)
	}
}
