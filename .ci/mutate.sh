#!/usr/bin/env bash
# mutate.sh (make mutate): mutation testing with go-gremlins over the
# product, the trace validator, spec and modelcheck, one package at a time
# (each mutant is tested against its own package's tests), then
# internal/mutation/report judges the results against
# internal/mutation/equivalent.txt and the efficacy targets (95% for the
# product and the validator, 90% elsewhere). Not part of CI: about an hour
# on a 2-core machine. Figures: docs/perf.md.
#
# Usage: .ci/mutate.sh [pkg ...]   (default: the list below)
# Env:   OUT (default: a temporary folder, kept and printed), GO.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
if [ $# -gt 0 ]; then pkgs=("$@"); else
	pkgs=(impl/eventservice impl/node impl/coordinator impl/logcoord impl/store impl/store/storetest
		impl/retry impl/trace harness/tracecheck spec modelcheck)
fi
"$GO" install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0 || exit 2
GREMLINS="$("$GO" env GOPATH)/bin/gremlins"
OUT=${OUT:-$(mktemp -d -t drainproof-mutate-XXXX)}
mkdir -p "$OUT"
start=$(date +%s)
for p in "${pkgs[@]}"; do
	n=${p//\//_}
	t0=$(date +%s)
	# One worker, two CPUs per test run: the machine has two cores, and a
	# mutant's tests are the package's own (-timeout-coefficient: the
	# package's slowest tests under a mutant that slows them).
	"$GREMLINS" unleash --workers 1 --test-cpu 2 --timeout-coefficient 3 -o "$OUT/$n.json" "./$p" >"$OUT/$n.log" 2>&1 ||
		echo "gremlins failed on $p (see $OUT/$n.log)"
	echo "$p: $(( $(date +%s) - t0 )) s"
done
echo "mutation testing: $(( $(date +%s) - start )) s; results in $OUT"
"$GO" run ./internal/mutation/report "$OUT" "${pkgs[@]}"
