#!/usr/bin/env bash
# mutate.sh (make mutate): mutation testing (the mutants of go-gremlins
# v0.6.0's default mutators, run by internal/mutation/sample with test
# selection, or by gremlins itself: ENGINE below) over the product, the
# trace validator, spec and modelcheck, one package at a time
# (each mutant is tested against its own package's tests), then
# internal/mutation/report judges the results against
# internal/mutation/equivalent.txt and the efficacy targets (95% for the
# product and the validator, 90% elsewhere). Not part of CI, and hours on
# a 2-core machine: each mutant costs a build of its package's test binary
# and the tests that reach it (with gremlins, the whole suite:
# impl/eventservice alone took 68 minutes at load 15-24); run packages one
# by one. spec and modelcheck (554 and 1,158 mutants,
# suites of a minute or more: days for all) are sampled instead: a seeded
# draw of SAMPLE_N mutants each (0: all of them), tested through go test
# -overlay by internal/mutation/sample (switch cases included) with test
# selection (-select): each test is run alone once with coverage, and a
# mutant is judged by the tests that execute its code (every test where no
# function holds it); the report gives the efficacy's 95% interval.
# Figures: docs/perf.md.
#
# Usage: .ci/mutate.sh [pkg ...]   (default: the list below)
# Env:   OUT (default: a temporary folder, kept and printed), GO,
#        SAMPLE_N (default 200), SEED (default 20261202): the draw for the
#        sampled packages; ENGINE (select or gremlins, below); SCHEMA (1 or
#        0, below).
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
all=(impl/eventservice impl/node impl/coordinator impl/logcoord impl/store impl/store/storetest impl/transport impl/daemon impl/bugs
	impl/retry impl/trace harness/tracecheck spec modelcheck)
if [ $# -gt 0 ]; then pkgs=("$@"); else pkgs=("${all[@]}"); fi
# ENGINE=select (the default): every package through
# internal/mutation/sample -select, which also runs the mutants of switch
# cases that gremlins leaves NOT COVERED; ENGINE=gremlins: gremlins for
# all but spec and modelcheck, as the figures before 2026-12-03 were taken.
ENGINE=${ENGINE:-select}
# SCHEMA=1 (the default): with ENGINE=select, the mutants are built into one
# test binary per package where they can be (mutant schemata: sample
# -schema), each switched on at run time; SCHEMA=0 builds each mutant
# alone. The verdicts are the same (internal/mutation's
# TestSchemataJudgeAsBuildsOfTheirOwn; docs/perf.md).
schema=-schema
case ${SCHEMA:-1} in
1) ;;
0) schema= ;;
*) echo "mutate: SCHEMA=$SCHEMA: want 1 or 0"; exit 2 ;;
esac
case $ENGINE in
select | gremlins) ;;
*) echo "mutate: ENGINE=$ENGINE: want select or gremlins"; exit 2 ;;
esac
OUT=${OUT:-$(mktemp -d -t drainproof-mutate-XXXX)}
mkdir -p "$OUT"
start=$(date +%s)
if [ "$ENGINE" = gremlins ]; then
	"$GO" install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0 || exit 2
	GREMLINS="$("$GO" env GOPATH)/bin/gremlins"
	# A mutant's time limit is set from gremlins' coverage run (below), and
	# go test answers that run from its result cache when the package's tests
	# passed before with the same flags (a second run, a dry run): 1.2 s
	# instead of tracecheck's 40, a limit of 12 s, and mutants its tests let
	# live "timed out" (counted as killed). -count=1 defeats the cache.
	export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"
	# The canary first: its test leaves one mutant alive on purpose. A gremlins
	# whose test command cannot run (as with --test-cpu, which v0.6.0 passes to
	# go test as the one argument "-cpu N") reports every mutant killed; that
	# must stop the run, not pass as 100%.
	"$GREMLINS" unleash --workers 1 -o "$OUT/canary.json" ./internal/mutation/testdata/canary >"$OUT/canary.log" 2>&1
	if ! grep -q ' LIVED ' "$OUT/canary.log" || ! grep -q ' KILLED ' "$OUT/canary.log"; then
		echo "mutate: gremlins did not report the canary's one live and one killed mutant (see $OUT/canary.log): its test command is broken"
		exit 2
	fi
fi
SAMPLE_N=${SAMPLE_N:-200}
SEED=${SEED:-20261202}
for p in "${pkgs[@]}"; do
	n=${p//\//_}
	case $ENGINE:$p in
	*:spec | *:modelcheck | select:*)
		t0=$(date +%s)
		# spec and modelcheck are sampled (see the header); the others
		# are run whole. The run writes its JSON after every mutant, so a
		# run stopped early is a smaller uniform sample. Every verdict is
		# that of the tests that can reach the mutant, which is the whole
		# suite's (internal/mutation's TestSelectionJudgesAsTheWholeSuite;
		# docs/perf.md).
		k=0
		case $p in spec | modelcheck) k=$SAMPLE_N ;; esac
		"$GO" run ./internal/mutation/sample -select $schema -n "$k" -seed "$SEED" \
			-o "$OUT/$n.json" "$p" >"$OUT/$n.log" 2>&1 || echo "sample failed on $p (see $OUT/$n.log)"
		echo "$p: $(( $(date +%s) - t0 )) s ($([ "$k" = 0 ] && echo every mutant || echo a sample of "$k"))"
		continue
		;;
	esac
	# gremlins walks the folder's subfolders too: every subfolder that is
	# a package of its own (Go files of its own: impl/store/storetest under
	# impl/store, spec/twophase under spec) is left out, or its mutants
	# would be judged by the wrong tests (and storetest's a second time).
	excl=()
	while IFS= read -r d; do
		excl+=(-E "^${d#"$p"/}/")
	done < <(find "$p" -mindepth 2 -name '*.go' -printf '%h\n' | sort -u)
	t0=$(date +%s)
	# One worker: the machine has two cores, which a test run uses by
	# itself (GOMAXPROCS); a mutant's tests are the package's own. A
	# mutant's time limit is the coefficient times the coverage run, whose
	# build is cached while every mutant's is not: at 3 a loaded machine
	# timed mutants out (counted as killed) that the tests let live, so 10,
	# which only a hang exceeds. No --test-cpu: gremlins v0.6.0 hands it to
	# go test as one argument, and every mutant then "fails" (the canary
	# above).
	"$GREMLINS" unleash --workers 1 --timeout-coefficient 10 "${excl[@]}" -o "$OUT/$n.json" "./$p" >"$OUT/$n.log" 2>&1 ||
		echo "gremlins failed on $p (see $OUT/$n.log)"
	echo "$p: $(( $(date +%s) - t0 )) s"
done
echo "mutation testing: $(( $(date +%s) - start )) s; results in $OUT"
"$GO" run ./internal/mutation/report "$OUT" "${pkgs[@]}"
