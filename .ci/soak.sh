#!/usr/bin/env bash
# soak.sh (make soak): many seeds of the simulated cluster (both
# transports) and of the real one (3 drainproofd nodes, the rolling
# upgrade, every fault: docs/cluster.md), each run split into shards
# (--shard i/n) that GNU parallel runs SOAK_JOBS at a time (a plain loop
# when parallel is not installed), then `checker report merge` on each
# run's shard reports: one verdict and one table per run, each failed
# seed with the command that replays it. Not part of CI.
#
# Env: SOAK_SEEDS (real-cluster seeds, 50), SOAK_SIM_SEEDS (simulated
# seeds per transport, 1000; 0 skips them), SOAK_SIM_SHARDS (8),
# SOAK_JOBS (shards at once, 1: the real cluster's timing faults want a
# quiet machine), SOAK_DURATION (of a real-cluster seed, 30s),
# SOAK_FAULTS (the real cluster's, every fault: kill,pause,partition,delay,disk,stale),
# SOAK_OUT (where the reports go; emptied first), SOAK_RUNNER (parallel
# or loop; parallel when it is installed), SOAK_BUG (a bug of the zoo
# switched on in every run, binaries built with -tags bugs: the soak
# must then fail), GO.
# Exit: 0 if every run passed, else the worst of the merges' codes (1 a
# seed failed, 2 a bad or missing report, 3 a shard was interrupted).
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
SEEDS=${SOAK_SEEDS:-50}
SIM_SEEDS=${SOAK_SIM_SEEDS:-1000}
SIM_SHARDS=${SOAK_SIM_SHARDS:-8}
JOBS=${SOAK_JOBS:-1}
DURATION=${SOAK_DURATION:-30s}
FAULTS=${SOAK_FAULTS:-kill,pause,partition,delay,disk,stale}
OUT=${SOAK_OUT:-${TMPDIR:-/tmp}/drainproof-soak}
for v in SEEDS SIM_SEEDS SIM_SHARDS JOBS; do
	if ! [[ ${!v} =~ ^[0-9]+$ ]]; then
		echo "make soak: SOAK_$v=${!v}: want a whole number" >&2
		exit 2
	fi
done
if [ "$JOBS" -lt 1 ] || [ "$SIM_SHARDS" -lt 1 ]; then
	echo "make soak: SOAK_JOBS and SOAK_SIM_SHARDS must be at least 1" >&2
	exit 2
fi

runner=${SOAK_RUNNER:-}
if [ -z "$runner" ]; then
	if command -v parallel >/dev/null 2>&1; then runner=parallel; else runner=loop; fi
elif [ "$runner" != parallel ] && [ "$runner" != loop ]; then
	echo "make soak: SOAK_RUNNER=$runner: want parallel or loop" >&2
	exit 2
fi

# The binaries stay in $OUT/bin: the merged reports' replay commands
# name them.
bin=$OUT/bin
rm -rf "$OUT" && mkdir -p "$bin" || exit 2
tags=() bug=()
if [ -n "${SOAK_BUG:-}" ]; then tags=(-tags bugs) bug=(--bug "$SOAK_BUG"); fi
"$GO" build "${tags[@]}" -o "$bin/checker" ./cmd/checker && "$GO" build "${tags[@]}" -o "$bin/drainproofd" ./cmd/drainproofd || exit 2

worst=0
# shards NAME N ARGS...: the run ARGS in N shards, reports in $OUT/NAME,
# then their merge.
shards() {
	local name=$1 n=$2
	shift 2
	local dir=$OUT/$name
	mkdir -p "$dir"
	echo "== $name: checker $* in $n shards, $JOBS at a time ($runner)"
	if [ "$runner" = parallel ]; then
		# parallel runs each job through a shell: the arguments are
		# words without spaces. A shard that finds a violation exits 1;
		# only the merge decides.
		parallel --will-cite -j"$JOBS" --halt never \
			"$bin/checker $* --shard {}/$n --json > $dir/shard-{}.json 2> $dir/shard-{}.log" ::: $(seq 0 $((n - 1)))
	else
		for i in $(seq 0 $((n - 1))); do
			"$bin/checker" "$@" --shard "$i/$n" --json >"$dir/shard-$i.json" 2>"$dir/shard-$i.log"
		done
	fi
	"$bin/checker" report merge "$dir" | tee "$dir/merged.txt"
	local code=${PIPESTATUS[0]}
	echo "== $name: report merge exit $code"
	if [ "$code" -gt "$worst" ]; then worst=$code; fi
}

if [ "$SIM_SEEDS" -gt 0 ]; then
	n=$((SIM_SHARDS < SIM_SEEDS ? SIM_SHARDS : SIM_SEEDS))
	for tr in heartbeat logcoord; do
		shards "simulate-$tr" "$n" simulate --seed 1 --seeds "$SIM_SEEDS" --steps 2000 --settle 3000 --transport "$tr" "${bug[@]}"
	done
fi
if [ "$SEEDS" -gt 0 ]; then
	shards cluster "$SEEDS" cluster --binary "$bin/drainproofd" --nodes 3 --seed 1 --seeds "$SEEDS" \
		--duration "$DURATION" --upgrade --faults "$FAULTS" "${bug[@]}"
fi
echo "make soak: reports in $OUT; exit $worst"
exit "$worst"
