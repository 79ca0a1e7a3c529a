// Command checker is drainproof's command line: it model-checks the
// drain-and-registration protocol (and a calibration model) with the
// modelcheck engine, reading the same .cfg files as TLC.
//
//	checker check [--model NAME | --config FILE.cfg] [--workers N] [--max-states N]
//	              [--max-depth N] [--timeout D] [--json] [--progress D]
//
// Exit codes: 0 ok, 1 violation or deadlock, 2 usage or operational error,
// 3 incomplete (a limit stopped the run).
package main
