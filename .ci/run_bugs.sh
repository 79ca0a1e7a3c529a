#!/usr/bin/env bash
# run_bugs.sh (make bugs): the implementation's bug zoo. For each bug
# that `checker bugs --list` prints (bugs.Names: the model bugs of
# docs/protocol.md §13, then the implementation-only ones such as
# LeakBatchOnError), run the impl test suite built with
# -tags bugs and the bug switched on (DRAINPROOF_BUG=<name>) and require
# it to FAIL; then run it with no bug switched on and require it to PASS.
#
# Usage: .ci/run_bugs.sh [bug ...]     (default: every bug)
# Env:   GOFLAGS and GO (default: go) are honoured; PKGS overrides the
#        packages under test (default: ./impl/... ./harness/sim ./harness/lincheck: the product and the harness packages whose tests run the product; the trace validator's and the real cluster's catch bugs in checker bugs and checker cluster --bug).
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
PKGS=${PKGS:-./impl/... ./harness/sim ./harness/lincheck}
if [ $# -gt 0 ]; then
	names=("$@")
else
	mapfile -t names < <("$GO" run ./cmd/checker bugs --list)
fi
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== baseline: -tags bugs, no bug switched on (must pass)"
if DRAINPROOF_BUG= "$GO" test -tags bugs -count=1 -timeout 300s $PKGS >"$log" 2>&1; then
	echo "PASS  (none)"
else
	echo "FAIL  (none): the suite must pass without a bug"
	cat "$log"
	status=1
fi

for bug in "${names[@]}"; do
	if DRAINPROOF_BUG="$bug" "$GO" test -tags bugs -count=1 -timeout 300s $PKGS >"$log" 2>&1; then
		echo "MISSED $bug: the suite passed with the bug on"
		status=1
	else
		# pkg:Test for each failed top-level test, e.g. eventservice:TestX.
		caught=$(awk '/^--- FAIL: /{t[n++]=$3} /^FAIL\t/{split($2,p,"/"); for(i=0;i<n;i++) print p[length(p)] ":" t[i]; n=0}' "$log" | sort -u | paste -sd, -)
		if grep -q -E 'panic:|build failed|\[setup failed\]' "$log" && [ -z "$caught" ]; then
			echo "ERROR  $bug: the suite did not run cleanly"
			cat "$log"
			status=1
		else
			echo "CAUGHT $bug by ${caught:-?}"
		fi
	fi
done
exit $status
