#!/usr/bin/env bash
# fuzz.sh (make fuzz): a short fuzzing run of each target below, one at a
# time, FUZZTIME each (5s unless set; the cfg parser's 30s).
#
# Go 1.26's fuzzing coordinator can end a duration-bounded run with a bare
# "context deadline exceeded" failure at the -fuzztime boundary when its
# workers are starved of CPU (a race between the deadline and the workers'
# stop, fixed in Go 1.27): no input failed and none was written. A target
# that fails that way, and only that way, is run once more; a failing
# input (written to testdata/fuzz/), a panic or any other failure fails at
# once, with go test's output.
#
# Usage: .ci/fuzz.sh [FuzzName ...]   (default: every target below)
# Env: FUZZTIME, GO.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
targets=(
	"./tla/tlacfg FuzzParse 30s"
	"./impl/transport FuzzDispatch"
	"./impl/transport FuzzSetLiveness"
	"./impl/transport FuzzWriteEvents"
	"./impl/transport FuzzReport"
	"./impl/transport FuzzQuery"
	"./impl/transport FuzzDispatcherHeartbeat"
	"./impl/transport FuzzReadEvents"
	"./impl/daemon FuzzJoin"
	"./impl/daemon FuzzHeartbeat"
	"./impl/daemon FuzzLeave"
	"./impl/daemon FuzzDrainNode"
	"./impl/daemon FuzzMembers"
)
log=$(mktemp -t drainproof-fuzz-XXXX)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
	read -r pkg fn d <<<"$t"
	if [ $# -gt 0 ] && [[ " $* " != *" $fn "* ]]; then continue; fi
	d=${d:-$FUZZTIME}
	for try in 1 2; do
		echo "$GO test -run '^\$' -fuzz '^$fn\$' -fuzztime $d $pkg"
		if "$GO" test -run '^$' -fuzz "^$fn\$" -fuzztime "$d" "$pkg" >"$log" 2>&1; then
			grep -v '^fuzz: elapsed' "$log"
			break
		fi
		if [ "$try" = 1 ] && grep -q '^    context deadline exceeded$' "$log" &&
			! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"; then
			echo "make fuzz: $fn ended with the coordinator's deadline race (no failing input): once more"
			continue
		fi
		cat "$log"
		echo "make fuzz: $fn FAILED"
		exit 1
	done
done
echo "make fuzz: passed"
