package coordinator_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// plantedBugs are hand-written bugs of the coordinator and the
// LogCoordinator, each one replacement in one source file, that the
// explorer (TestExploreCoordinator) must catch: TestPlantedBugsCaught
// builds the package with each (go test -overlay) and requires the
// explorer to fail with the rule named. A replacement that no longer
// applies (the code moved) fails the test, so the list cannot rot.
var plantedBugs = []struct {
	name, file, old, new string
	rule                 string // the rule the failure must name
}{
	{
		// (a) A late answer of an older epoch taken as current.
		name: "StaleAnswerTaken", file: "coordinator.go",
		old: "(a.Epoch == n.epoch || (bugs.AcceptStaleEpochOn() && a.Epoch < n.epoch))",
		new: "a.Epoch <= n.epoch", rule: "D8",
	},
	{
		// (a) A late liveness response of an older process taken as the
		// current one's.
		name: "StaleResponseTaken", file: "coordinator.go",
		old: "c.observe(n, r.Epoch, r.Liveness, false, 0, now)",
		new: "c.observe(n, max(r.Epoch, n.epoch), r.Liveness, false, 0, now)", rule: "D2",
	},
	{
		// (b) The recorded legacy answer carried over to the process
		// after a restart.
		name: "LegacyAnswerCarriedOver", file: "coordinator.go",
		old: "return Decision{Legacy: true, LegacyEpoch: s.legacyEpoch}, nil",
		new: "return Decision{Legacy: true, LegacyEpoch: n.epoch}, nil", rule: "§9: the legacy answer was given for epoch 2",
	},
	{
		// (b) The version (legacy) kept across a restart: the restarted
		// process is taken for legacy until its bootstrap.
		name: "VersionKeptAcrossRestart", file: "coordinator.go",
		old: "n.versionKnown, n.version = false, 0\n",
		new: "\n", rule: "trace rejected",
	},
	{
		// (b) The recorded legacy answer kept when T leaves the
		// membership: the rejoined process gets the old answer.
		name: "LegacySessionSurvivesRejoin", file: "coordinator.go",
		old: "if s := c.session; s != nil && s.target == id {\n\t\tif s.drainedEpoch",
		new: "if s := c.session; s != nil && s.target == id && s.legacyEpoch == 0 {\n\t\tif s.drainedEpoch", rule: "C8/§9",
	},
	{
		// A node that takes a command of another epoch (N1): the new
		// process steps on the old process's late DRAINING.
		name: "NodeTakesOldEpochCommand", file: "../node/node.go",
		old: "changed = cmd.Epoch == n.cfg.Epoch && n.live.Advance(cmd.Target)",
		new: "changed = n.live.Advance(cmd.Target)", rule: "trace rejected",
	},
	{
		// (c) Expire one tick early: at exactly the TTL, Expire deletes
		// the entry that Answer still answers with.
		name: "ExpireOneTickEarly", file: "../logcoord/logcoord.go",
		old: "if now-e.receivedAt > c.cfg.TTL {",
		new: "if now-e.receivedAt >= c.cfg.TTL {", rule: "L4",
	},
	{
		// (c) Answer one tick early: at exactly the TTL, Answer says
		// unknown of the entry Expire keeps.
		name: "AnswerOneTickEarly", file: "../logcoord/logcoord.go",
		old: "c.cfg.TTL > 0 && now-e.receivedAt > c.cfg.TTL",
		new: "c.cfg.TTL > 0 && now-e.receivedAt >= c.cfg.TTL", rule: "L3",
	},
}

// TestPlantedBugsCaught builds the package with each planted bug and
// requires TestExploreCoordinator to fail, naming the bug's rule and a
// schedule. It compiles one test binary per bug, so it runs only with
// DRAINPROOF_PLANTED=1 (docs/verification.md).
func TestPlantedBugsCaught(t *testing.T) {
	if os.Getenv("DRAINPROOF_PLANTED") != "1" {
		t.Skip("set DRAINPROOF_PLANTED=1 to build the package with each planted bug (one go test each)")
	}
	schedule := regexp.MustCompile(`schedule \[[0-9 ]*\]: [^\n]*`)
	for _, pb := range plantedBugs {
		t.Run(pb.name, func(t *testing.T) {
			src, err := os.ReadFile(pb.file)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(src), pb.old); n != 1 {
				t.Fatalf("%s: the text to replace occurs %d times (want 1): the planted bug no longer applies", pb.file, n)
			}
			dir := t.TempDir()
			bugged := filepath.Join(dir, filepath.Base(pb.file))
			if err := os.WriteFile(bugged, []byte(strings.Replace(string(src), pb.old, pb.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			abs, err := filepath.Abs(pb.file)
			if err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: bugged}})
			ovf := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(ovf, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "test", "-overlay", ovf, "-count=1", "-run", "^TestExploreCoordinator$", ".")
			cmd.Env = append(os.Environ(), "DRAINPROOF_PLANTED=", "DRAINPROOF_BUG=")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the explorer passed with %s planted:\n%s", pb.name, out)
			}
			m := schedule.Find(out)
			if m == nil || !strings.Contains(string(m), pb.rule) {
				t.Fatalf("with %s planted the explorer failed without naming %s and a schedule:\n%s", pb.name, pb.rule, out)
			}
			t.Logf("%s caught: %s", pb.name, m)
		})
	}
}
