// Command checker is drainproof's command line. It wires the packages
// together: the modelcheck engine over the protocol model of package spec
// (read from the same .cfg files as TLC), the seeded cluster simulator over
// the implementation, and TLC itself.
//
//	checker check    [--model NAME | --config FILE.cfg] [--workers N] [--max-states N]
//	                 [--max-depth N] [--timeout D] [--continue] [--json] [--progress D]
//	                 [--html FILE] [--simulate --walks N --depth D --seed S]
//	checker verify   [--models tla/models.json] [--all] [--workers N] [--json]
//	checker tlc      [--models tla/models.json] [--jar tla2tools.jar] [--record] [--only CFG]
//	checker simulate --seed S --steps N [--seeds K] [--transport heartbeat|logcoord] [--settle M] [--json]
//	checker lincheck [--clients N] [--ops N] [--seed S] [--timeout D] [--html FILE] [--history FILE] [--json]
//	checker models
//
// Exit codes: 0 ok, 1 violation, deadlock or broken stream, 2 usage or
// operational error, 3 incomplete (a limit stopped the run).
package main
