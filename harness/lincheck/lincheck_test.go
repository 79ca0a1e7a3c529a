package lincheck

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

var (
	flagSeeds   = flag.Int("lincheck.seeds", 6, "seeds of TestRecordedLinearizable (env LINCHECK_SEEDS)")
	flagOps     = flag.Int("lincheck.ops", 800, "client operations per seed")
	flagTimeout = flag.Duration("lincheck.timeout", time.Minute, "check timeout per seed of TestRecordedLinearizable")
)

// seeds returns the number of seeds: LINCHECK_SEEDS if set, else
// -lincheck.seeds (also when it is empty). A malformed value or one below 1 is an error, not a
// silent fallback (a run of 0 seeds would prove nothing).
func seeds() (int, error) {
	n, src := *flagSeeds, "-lincheck.seeds"
	if v := os.Getenv("LINCHECK_SEEDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return 0, fmt.Errorf("LINCHECK_SEEDS=%q: not an integer", v)
		}
		src = "LINCHECK_SEEDS"
	}
	if n < 1 {
		return 0, fmt.Errorf("%s=%d: want at least 1 seed", src, n)
	}
	return n, nil
}

func TestSeeds(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
		err  string
	}{{"3", 3, ""}, {"x1", 0, "not an integer"}, {"3x", 0, "not an integer"}, {"0", 0, "at least 1"}, {"-2", 0, "at least 1"}} {
		t.Setenv("LINCHECK_SEEDS", tc.env)
		n, err := seeds()
		if tc.err == "" && (err != nil || n != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("LINCHECK_SEEDS=%q: %d, %v; want %d, %q", tc.env, n, err, tc.want, tc.err)
		}
	}
}

// maxUnknown is how many seeds of n may come back Unknown (the check's
// timeout expired: nothing proven): a quarter, rounded down, so a run of
// fewer than 4 seeds must prove every one, and a run where the checker
// proves nothing fails.
func maxUnknown(n int) int { return n / 4 }

// TestRecordedLinearizable records histories of the real service over
// many seeds and checks each. With a bug of the zoo switched on
// (DRAINPROOF_BUG, build tag bugs) it must fail; .ci/run_bugs.sh
// relies on that. It also fails when more than maxUnknown seeds are
// Unknown (-lincheck.timeout=1ns shows it). On an illegal history it
// writes the HTML report and the history under the test's temporary
// folder (or $DRAINPROOF_REPORTS) and prints where.
// Spec: docs/protocol.md §5 and §11, checked by porcupine.
func TestRecordedLinearizable(t *testing.T) {
	n, err := seeds()
	if err != nil {
		t.Fatal(err)
	}
	unknown := 0
	for seed := range int64(n) {
		h, err := Record(context.Background(), Config{Clients: 8, Ops: *flagOps, Seed: seed})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		res := Check(h, *flagTimeout)
		switch res.Outcome {
		case Linearizable:
		case Unknown:
			unknown++
			t.Logf("seed %d: unknown (timeout) after %v: not proven", seed, res.Duration)
		default:
			reportIllegal(t, h, res, seed)
		}
	}
	if unknown > maxUnknown(n) {
		t.Errorf("%d of %d seeds unknown (timeout %v): at most %d may be", unknown, n, *flagTimeout, maxUnknown(n))
	}
}

// reportIllegal fails the test for an illegal history of seed, with its
// report and the history saved where tempFile says.
func reportIllegal(t *testing.T, h *History, res Result, seed int64) {
	t.Helper()
	html := tempFile(t, "lincheck-*.html")
	if err := res.VisualizeFile(html); err != nil {
		t.Errorf("visualize: %v", err)
	}
	js := tempFile(t, "lincheck-*.json")
	if err := h.SaveFile(js); err != nil {
		t.Errorf("save: %v", err)
	}
	t.Errorf("seed %d (bug %q): not linearizable (%d ops); report %s, history %s (removed after the test unless DRAINPROOF_REPORTS names a folder)", seed, h.Bug, res.Ops, html, js)
}

// tempFile makes a file for a failure report under the test's temporary
// folder (removed with the test), or under $DRAINPROOF_REPORTS to keep it.
func tempFile(t *testing.T, pattern string) string {
	t.Helper()
	dir := os.Getenv("DRAINPROOF_REPORTS")
	if dir == "" {
		dir = t.TempDir()
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return f.Name()
}

// hist builds a history of clients from ops written as
// Op literals; it fails the test if it is malformed.
func hist(t *testing.T, clients int, ops ...Op) *History {
	t.Helper()
	h := &History{Version: HistoryVersion, Clients: clients, Ops: ops}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	return h
}

// cleanupSeen is a history in which d0, d1 (c2's) and d2 are registered
// and made eligible by the close, and a read in the middle of the cleanup
// that removes them sees held subscribed.
func cleanupSeen(held ...string) []Op {
	return []Op{
		{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "d0"},
		{Client: 0, Call: 3, Return: 4, Kind: KindRegister, ID: "d1"},
		{Client: 0, Call: 5, Return: 6, Kind: KindRegister, ID: "d2"},
		{Client: 0, Call: 7, Return: 8, Kind: KindClose},
		{Client: 0, Call: 9, Return: 20, Kind: KindCleanup, Removed: 3},
		{Client: 1, Call: 10, Return: 11, Kind: KindSubscribers, Held: held},
	}
}

func TestHandWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Outcome
		ops  []Op
	}{{
		// A registration whose RegisterTable fails: a report sees its
		// early count, the subscription comes and goes, the count is
		// still 1 after the subscription is gone, and 0 at the end.
		name: "failed registration seen mid-flight",
		want: Linearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 20, Kind: KindRegister, ID: "d0", Fault: FaultSchema, Err: ErrSchema},
			{Client: 1, Call: 2, Return: 3, Kind: KindReport, Count: 1},
			{Client: 1, Call: 4, Return: 5, Kind: KindSubscribers, Held: []string{"d0"}},
			{Client: 1, Call: 6, Return: 7, Kind: KindSubscribers, Held: []string{}},
			{Client: 1, Call: 8, Return: 9, Kind: KindReport, Count: 1},
			{Client: 1, Call: 21, Return: 22, Kind: KindReport},
		},
	}, {
		// A replaced registration is released, then decremented, while
		// the new one (which fails) holds its early count: reports see
		// 2, then 1 with d0 subscribed again, then 0.
		name: "replacement seen mid-flight",
		want: Linearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "d0"},
			{Client: 0, Call: 3, Return: 30, Kind: KindRegister, ID: "d0", Fault: FaultSchema, Err: ErrSchema},
			{Client: 1, Call: 4, Return: 5, Kind: KindReport, Count: 2},
			{Client: 1, Call: 6, Return: 7, Kind: KindSubscribers, Held: []string{}},
			{Client: 1, Call: 8, Return: 9, Kind: KindReport, Count: 2},
			{Client: 1, Call: 10, Return: 11, Kind: KindReport, Count: 1},
			{Client: 1, Call: 12, Return: 13, Kind: KindSubscribers, Held: []string{"d0"}},
			{Client: 1, Call: 31, Return: 32, Kind: KindReport},
			{Client: 1, Call: 33, Return: 34, Kind: KindAudit, Held: []string{}, Registered: map[string]uint8{}},
		},
	}, {
		// A report that overlaps the close may read the gate open after
		// a shorter report inside it read it closed.
		name: "report straddling the close",
		want: Linearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 4, Kind: KindClose},
			{Client: 1, Call: 2, Return: 9, Kind: KindReport},
			{Client: 2, Call: 5, Return: 6, Kind: KindReport, Closed: true},
			{Client: 2, Call: 7, Return: 8, Kind: KindRegister, ID: "t0", Err: ErrAdmissionClosed},
		},
	}, {
		// Two overlapping removers: only one decrements.
		name: "concurrent removes of one dispatcher",
		want: Linearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "t1"},
			{Client: 0, Call: 3, Return: 6, Kind: KindRemove, ID: "t1"},
			{Client: 1, Call: 3, Return: 7, Kind: KindRemove, ID: "t1"},
			{Client: 2, Call: 8, Return: 9, Kind: KindReport},
		},
	}, {
		// CountAfterPublish: the subscription exists but the count does
		// not cover it.
		name: "subscribed but not counted",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 10, Kind: KindRegister, ID: "d0"},
			{Client: 1, Call: 2, Return: 3, Kind: KindSubscribers, Held: []string{"d0"}},
			{Client: 1, Call: 4, Return: 5, Kind: KindReport},
		},
	}, {
		name: "registered after the close returned",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindClose},
			{Client: 1, Call: 3, Return: 4, Kind: KindRegister, ID: "t0"},
		},
	}, {
		name: "gate reopens",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindReport, Closed: true},
			{Client: 1, Call: 3, Return: 4, Kind: KindReport},
		},
	}, {
		name: "removed but still counted",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "t2"},
			{Client: 0, Call: 3, Return: 4, Kind: KindRemove, ID: "t2"},
			{Client: 1, Call: 5, Return: 6, Kind: KindReport, Count: 1},
		},
	}, {
		// LeakOnSchemaFailure: the audit sees the failed registration's
		// subscription.
		name: "leaked subscription at the audit",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "d1", Fault: FaultSchema, Err: ErrSchema},
			{Client: 0, Call: 3, Return: 4, Kind: KindAudit, Held: []string{"d1"}, Registered: map[string]uint8{}},
		},
	}, {
		// Two brokers (d0 is c1's, d1 is c2's): a report reads c1's count,
		// then c2's. Between the two reads d0 goes and d1 comes, so the
		// report counts both though no moment had two registrations: the
		// non-atomic sum is what the code returns, and it is safe, since
		// no count rises once its broker's gate is closed.
		name: "report reads the brokers one at a time",
		want: Linearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "d0"},
			{Client: 1, Call: 3, Return: 10, Kind: KindReport, Count: 2},
			{Client: 0, Call: 4, Return: 5, Kind: KindRemove, ID: "d0"},
			{Client: 0, Call: 6, Return: 7, Kind: KindRegister, ID: "d1"},
		},
	}, {
		// The same with d1 registered before d0 goes: 0 needs c2's count
		// read before c1's, which the report never does.
		name: "report reads the brokers in the other order",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindRegister, ID: "d0"},
			{Client: 1, Call: 3, Return: 10, Kind: KindReport},
			{Client: 0, Call: 4, Return: 5, Kind: KindRegister, ID: "d1"},
			{Client: 0, Call: 6, Return: 7, Kind: KindRemove, ID: "d0"},
		},
	}, {
		// A close is under way; a registration on c2 succeeds; a report
		// says closed. The close sets the flag only after every broker's
		// gate bit, and the registration was admitted before c2's bit, so
		// the closed report must count it (ClosedBeforeBrokers breaks
		// this).
		name: "closed report misses a registration of a broker still open",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 10, Kind: KindClose},
			{Client: 1, Call: 2, Return: 8, Kind: KindRegister, ID: "t1"},
			{Client: 2, Call: 3, Return: 4, Kind: KindReport, Closed: true},
		},
	}, {
		name: "closed report counts a registration of a broker still open",
		want: Linearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 10, Kind: KindClose},
			{Client: 1, Call: 2, Return: 8, Kind: KindRegister, ID: "t1"},
			{Client: 2, Call: 3, Return: 4, Kind: KindReport, Count: 1, Closed: true},
		},
	}, {
		// The inactivity cleanup walks the brokers in order, each one's
		// dispatchers in ID order: d0 and d2 (c1's) go before d1 (c2's),
		// so a read in the middle may see d1 alone.
		name: "cleanup broker by broker",
		want: Linearizable,
		ops:  cleanupSeen("d1"),
	}, {
		name: "cleanup in ID order across brokers",
		want: NotLinearizable,
		ops:  cleanupSeen("d2"),
	}, {
		name: "reset of an unknown dispatcher succeeds",
		want: NotLinearizable,
		ops: []Op{
			{Client: 0, Call: 1, Return: 2, Kind: KindReset, ID: "d2", Epoch: 1},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := hist(t, 3, tc.ops...)
			if res := Check(h, 10*time.Second); res.Outcome != tc.want {
				t.Fatalf("outcome %s, want %s", res.Outcome, tc.want)
			}
		})
	}
}

func TestVisualizeIllegal(t *testing.T) {
	h := hist(t, 2,
		Op{Client: 0, Call: 1, Return: 2, Kind: KindClose},
		Op{Client: 1, Call: 3, Return: 4, Kind: KindRegister, ID: "d0", Fault: FaultRefuse, Err: ErrNotReusable},
	)
	res := Check(h, 0)
	if res.Outcome != NotLinearizable {
		t.Fatalf("outcome %s", res.Outcome)
	}
	// The first illegal operation, and the state the model expected: after
	// the close's steps (one per broker's gate bit, then the flag).
	il := res.Illegal
	if il == nil || il.Client != 1 || !strings.HasPrefix(il.Op, "Register(d0") || il.Linearized != NumBrokers+1 || !strings.Contains(il.Expected, "closed") {
		t.Fatalf("Illegal = %+v, want client 1's Register(d0) after the close's %d steps, expected state closed", il, NumBrokers+1)
	}
	t.Log(il)
	var buf bytes.Buffer
	if err := res.Visualize(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"admission closed", "fault: refuse", "Register(d0, fault=refuse)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if err := (Result{Outcome: Linearizable}).Visualize(&buf); err == nil {
		t.Error("Visualize of a result not made by Check: no error")
	}
}

// TestVisualizeStatesTheVerdict: every page heads with its verdict, in the
// flow, and only the diagram's own box scrolls on load: a page whose
// window scrolls while it loads renders blank in chromium --headless
// --screenshot (cmd/checker's browser tests look at the pixels).
func TestVisualizeStatesTheVerdict(t *testing.T) {
	ok := hist(t, 2, Op{Client: 0, Call: 1, Return: 2, Kind: KindClose})
	bad := hist(t, 2,
		Op{Client: 0, Call: 1, Return: 2, Kind: KindClose},
		Op{Client: 1, Call: 3, Return: 4, Kind: KindRegister, ID: "d0", Fault: FaultRefuse, Err: ErrNotReusable},
	)
	for _, tc := range []struct {
		h    *History
		want string
	}{{ok, `class="lincheck-ok"`}, {bad, `class="lincheck-illegal"`}} {
		res := Check(tc.h, 0)
		var buf bytes.Buffer
		if err := res.Visualize(&buf); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		verdict := strings.Index(page, `<div id="lincheck-verdict" `+tc.want)
		canvas := strings.Index(page, `<div id="canvas">`)
		if verdict < 0 || canvas < verdict {
			t.Errorf("%s: the verdict does not head the page before the diagram", res.Outcome)
		}
		if want := map[Outcome]string{Linearizable: "<b>Linearizable.</b>", NotLinearizable: "<b>NOT linearizable.</b>"}[res.Outcome]; !strings.Contains(page, want) {
			t.Errorf("%s: the page does not say %s", res.Outcome, want)
		}
		// Our on-load script (porcupine's own scrolls only at a click).
		box := strings.Index(page, `<div id="lincheck-box"`)
		if box < 0 || box > canvas {
			t.Fatalf("%s: the diagram is not in its box", res.Outcome)
		}
		script := page[box:]
		script = script[:strings.Index(script, "</script>")]
		for _, scroll := range []string{"scrollIntoView", "window.scroll"} {
			if strings.Contains(script, scroll) {
				t.Errorf("%s: the page scrolls its window on load (%s)", res.Outcome, scroll)
			}
		}
		if !strings.Contains(script, "box.scrollLeft") {
			t.Errorf("%s: the box is not scrolled to the failing operation", res.Outcome)
		}
	}
}

// TestPartition checks that histories are cut only at audits that
// overlap nothing, and that each later partition starts with an assume
// step.
func TestPartition(t *testing.T) {
	audit := func(c, call, ret int64) Op {
		return Op{Client: int(c), Call: call, Return: ret, Kind: KindAudit, Held: []string{}, Registered: map[string]uint8{}}
	}
	h := hist(t, 2,
		audit(0, 1, 2),
		Op{Client: 0, Call: 3, Return: 6, Kind: KindReport},
		audit(1, 5, 7), // overlaps the report: no cut
		Op{Client: 0, Call: 8, Return: 9, Kind: KindReport},
		audit(0, 10, 11), // quiescent: cut
		Op{Client: 1, Call: 11, Return: 12, Kind: KindReport},
		audit(0, 13, 14), // touches the report's return (closed intervals): no cut
	)
	parts := Partition(h.Operations())
	if len(parts) != 3 {
		t.Fatalf("%d partitions, want 3", len(parts))
	}
	for i, p := range parts[1:] {
		if in := p[0].Input.(*Input); in.Step != stepAssume {
			t.Errorf("partition %d starts with %s, want assume", i+1, in.Step)
		}
	}
	if got := len(parts[0]) + len(parts[1]) + len(parts[2]); got != len(h.Operations())+2 {
		t.Errorf("%d steps in partitions, want %d (two audits shared)", got, len(h.Operations())+2)
	}
	if Partition(nil) != nil {
		t.Error("Partition(nil) != nil")
	}
	// An illegal step after a cut is still caught.
	h.Ops = append(h.Ops, Op{Client: 1, Call: 20, Return: 21, Kind: KindReport, Count: 3})
	if res := Check(h, 0); res.Outcome != NotLinearizable {
		t.Errorf("outcome %s, want illegal", res.Outcome)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	h, err := Record(context.Background(), Config{Clients: 3, Ops: 60, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := h.Save(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Ops) != len(h.Ops) || back.Seed != 7 || back.Clients != 3 {
		t.Fatalf("round trip changed the history: %d ops (want %d)", len(back.Ops), len(h.Ops))
	}
	if a, b := Check(h, 0).Outcome, Check(back, 0).Outcome; a != b {
		t.Fatalf("outcome %s before, %s after the round trip", a, b)
	}
	path := t.TempDir() + "/h.json"
	if err := h.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path + ".missing"); err == nil {
		t.Fatal("LoadFile of a missing file: no error")
	}
}

func TestLoadMalformed(t *testing.T) {
	const head = `{"version":2,"clients":2,"seed":0,"ops":[`
	for _, tc := range []struct{ name, in, want string }{
		{"empty", ``, "EOF"},
		{"not json", `hello`, "invalid character"},
		{"array", `[]`, "cannot unmarshal"},
		{"unknown field", `{"version":2,"clients":1,"ops":[],"extra":1}`, "unknown field"},
		{"trailing", `{"version":2,"clients":1,"ops":[]} {}`, "trailing data"},
		{"version", `{"version":1,"clients":1,"ops":[]}`, "version 1"},
		{"audit counts", head + `{"client":0,"call":1,"return":2,"kind":"audit","count":2,"counts":[1,0]}]}`, "want 2 per-broker counts summing to count 2"},
		{"audit without counts", head + `{"client":0,"call":1,"return":2,"kind":"audit","count":2}]}`, "per-broker counts"},
		{"report counts", head + `{"client":0,"call":1,"return":2,"kind":"report","counts":[1,0]}]}`, "report does not take field(s) counts"},
		{"no clients", `{"version":2,"clients":0,"ops":[]}`, "clients 0"},
		{"too many clients", `{"version":2,"clients":33,"ops":[]}`, "clients 33"},
		{"client range", head + `{"client":2,"call":1,"return":2,"kind":"close"}]}`, "op 0: client 2"},
		{"negative client", head + `{"client":-1,"call":1,"return":2,"kind":"close"}]}`, "client -1"},
		{"interval", head + `{"client":0,"call":3,"return":2,"kind":"close"}]}`, "interval [3, 2]"},
		{"kind", head + `{"client":0,"call":1,"return":2,"kind":"drain"}]}`, `unknown kind "drain"`},
		{"missing kind", head + `{"client":0,"call":1,"return":2}]}`, `unknown kind ""`},
		{"bad id", head + `{"client":0,"call":1,"return":2,"kind":"remove","id":"x9"}]}`, `unknown dispatcher "x9"`},
		{"missing id", head + `{"client":0,"call":1,"return":2,"kind":"remove"}]}`, `unknown dispatcher ""`},
		{"extra field", head + `{"client":0,"call":1,"return":2,"kind":"close","count":3}]}`, "close does not take field(s) count"},
		{"fault", head + `{"client":0,"call":1,"return":2,"kind":"register","id":"d0","fault":"fire"}]}`, `unknown fault "fire"`},
		{"register err", head + `{"client":0,"call":1,"return":2,"kind":"register","id":"d0","err":"unknown-dispatcher"}]}`, "register: unexpected err"},
		{"reset epoch", head + `{"client":0,"call":1,"return":2,"kind":"reset","id":"d0"}]}`, "epoch must be ≥ 1"},
		{"epoch overflow", head + `{"client":0,"call":1,"return":2,"kind":"reset","id":"d0","epoch":256}]}`, "cannot unmarshal"},
		{"held trigger", head + `{"client":0,"call":1,"return":2,"kind":"subscribers","held":["t0"]}]}`, "table trigger t0"},
		{"held twice", head + `{"client":0,"call":1,"return":2,"kind":"subscribers","held":["d1","d1"]}]}`, "d1 listed twice"},
		{"cleanup range", head + `{"client":0,"call":1,"return":2,"kind":"cleanup","removed":10}]}`, "removed 10"},
		{"audit id", head + `{"client":0,"call":1,"return":2,"kind":"audit","registered":{"q":1}}]}`, `unknown dispatcher "q"`},
		{"ops null entry", head + `null]}`, `unknown kind ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not wrap ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// FuzzLoad: Load never panics, and what it accepts checks to one of the
// three outcomes, the same twice (Check is deterministic), and the same
// after a Save/Load round trip. Unknown (a timeout) is compared only when
// both runs finished.
func FuzzLoad(f *testing.F) {
	f.Add(`{"version":2,"clients":2,"ops":[{"client":0,"call":1,"return":5,"kind":"register","id":"d0","fault":"schema","err":"schema"},{"client":1,"call":2,"return":3,"kind":"report","count":1}]}`)
	f.Add(`{"version":2,"clients":1,"ops":[{"client":0,"call":1,"return":2,"kind":"cleanup","removed":2}]}`)
	f.Add(`{"version":2,"clients":1,"ops":[{"client":0,"call":1,"return":2,"kind":"report","count":1}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		h, err := Load(strings.NewReader(in))
		if err != nil {
			return
		}
		if len(h.Operations()) > 2000 {
			return
		}
		first := Check(h, 10*time.Second)
		if !slices.Contains([]Outcome{Linearizable, NotLinearizable, Unknown}, first.Outcome) {
			t.Fatalf("outcome %q", first.Outcome)
		}
		var buf bytes.Buffer
		if err := h.Save(&buf); err != nil {
			t.Fatalf("save: %v", err)
		}
		h2, err := Load(&buf)
		if err != nil {
			t.Fatalf("a loaded history does not load after Save: %v\n%s", err, buf.String())
		}
		for _, again := range []Result{Check(h, 10*time.Second), Check(h2, 10*time.Second)} {
			if first.Outcome != Unknown && again.Outcome != Unknown && again.Outcome != first.Outcome {
				t.Fatalf("outcome %s, then %s", first.Outcome, again.Outcome)
			}
		}
	})
}

func TestRecordConfig(t *testing.T) {
	if _, err := Record(context.Background(), Config{Clients: MaxClients + 1}); err == nil {
		t.Error("too many clients: no error")
	}
	h, err := Record(context.Background(), Config{Clients: 2, Ops: -1})
	if err == nil {
		t.Errorf("negative ops: no error (%d ops)", len(h.Ops))
	}
	// Workloads larger than MaxOps (whose round arithmetic would overflow)
	// are refused, not silently shrunk.
	for _, c := range []Config{{Ops: math.MaxInt}, {Ops: MaxOps + 1}, {Ops: 10, Round: math.MaxInt}, {Ops: 10, Round: MaxOps + 1}} {
		if h, err := Record(context.Background(), c); err == nil {
			t.Errorf("%+v: no error (%d ops recorded)", c, len(h.Ops))
		}
	}
	// The workload is the one asked for: exactly Ops client operations.
	for _, c := range []Config{{Clients: 3, Ops: 100, Round: 7}, {Clients: 1, Ops: 1}, {Clients: 5, Ops: 3, Round: MaxOps}} {
		h, err := Record(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, op := range h.Ops {
			if op.Kind != KindAudit {
				n++
			}
		}
		if n != c.Ops {
			t.Errorf("%+v: %d client operations recorded", c, n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Record(ctx, Config{Clients: 2, Ops: 10}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestModelDescriptions(t *testing.T) {
	s := initState()
	s.Reg, s.Held, s.Count, s.Epoch[0], s.Req, s.Stage = 0b11, 0b1, [NumBrokers]int16{1, 1}, 3, 4, 1
	if got, want := Model.DescribeState(s), "count=1+1 open reg={d0@3,d1} held={d0} loop=req4/step1"; got != want {
		t.Errorf("DescribeState = %q, want %q", got, want)
	}
	s.Bits = 0b01
	if got, want := Model.DescribeState(s), "count=1+1 closing=01 reg={d0@3,d1} held={d0} loop=req4/step1"; got != want {
		t.Errorf("DescribeState = %q, want %q", got, want)
	}
	op := &Op{Kind: KindReset, ID: "d1", Epoch: 2, Err: ErrUnknownDispatcher}
	if got, want := Model.DescribeOperation(&Input{Op: op, Step: stepReset}, op), "Reset(d1, epoch 2) → unknown-dispatcher · reset"; got != want {
		t.Errorf("DescribeOperation = %q, want %q", got, want)
	}
	var _ porcupine.Model = Model
}
