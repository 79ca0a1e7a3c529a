// Command checker is drainproof's command line. It wires the packages
// together: the modelcheck engine over the protocol model of package spec
// (read from the same .cfg files as TLC), the seeded cluster simulator over
// the implementation, porcupine over the event service, and TLC itself.
//
//	checker check    [--model NAME | --config FILE.cfg] [--workers N] [--max-states N]
//	                 [--max-depth N] [--timeout D] [--continue] [--json] [--progress D]
//	                 [--html FILE] [--simulate --walks N --depth D --seed S] [--cpuprofile FILE]
//	checker verify   [--models tla/models.json] [--all] [--workers N] [--json]
//	checker tlc      [--models tla/models.json] [--jar tla2tools.jar] [--all | --only CFG] [--workers N]
//	                 [--record] [--json] [--versus]
//	checker simulate [--seed S] [--seeds K] [--shard i/n] [--steps N] [--settle M] [--transport heartbeat|logcoord]
//	                 [--store memory|pebble] [--bug NAME] [--json]
//	checker cluster  [--nodes N] [--seed S] [--seeds K] [--shard i/n] [--duration D] [--upgrade]
//	                 [--faults kill,pause,partition,delay,disk] [--bug NAME] [--html FILE] [--json]
//	checker report merge [--json] FILE|DIR...
//	checker bugs     [--seeds K] [--only NAME] [--cluster [--cluster-seeds K] [--cluster-duration D]] [--json]
//	checker lincheck [--clients N] [--ops N] [--seed S] [--timeout D] [--html FILE]
//	                 [--history FILE | --save FILE] [--bug NAME] [--json]
//	checker models
//	checker version
//	checker help [COMMAND]
//
// Every command prints one JSON object of the same shape with --json
// (report.go; docs/checker.md's "JSON output"), its help on stdout with -h,
// and bad input as one line on stderr with exit code 2, before anything
// runs. Exit codes: 0 ok, 1 violation, deadlock, broken stream or a model
// not as recorded, 2 usage or operational error, 3 incomplete (a limit, a
// timeout or Ctrl-C stopped the run; the figures so far are printed).
package main
