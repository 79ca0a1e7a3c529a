# drainproof: the main job is `make check`, the tests are `make test`.
GO      ?= go
CHECKER := $(GO) run ./cmd/checker
# where make check writes the traces it validates
TRACES  ?= $(or $(TMPDIR),/tmp)/drainproof-traces

.PHONY: check check-steps test mutate lint bench bugs tlc trace-parity fuzz build pgo clean proto soak

# bash for its SECONDS: the recipes time themselves without date(1)
SHELL := /bin/bash

# timed runs TARGET-steps and ends with one line: passed or FAILED, and how
# long it took.
define timed
	@SECONDS=0; if $(MAKE) --no-print-directory $(1)-steps; then \
		echo "make $(1): passed in $$SECONDS s"; \
	else echo "make $(1): FAILED after $$SECONDS s"; exit 1; fi
endef

## check: every model of tla/models.json against its recorded figures and
## bug matrix, action coverage over the correct models, the calibration
## model, a short seeded simulation per transport and per event store (exit 1
## on a broken stream, a lost, duplicated or out-of-order change event, or a
## drain still open that does not complete once the faults stop), one
## linearizability check of the event service, and trace validation
## (docs/trace.md) of model-scope and full simulations of both transports (the
## full ones through the refinement mapping), of a
## short stress run of the event service and of a lincheck run in trace mode,
## and one short run of a real cluster (3 drainproofd nodes, the rolling
## upgrade, every fault, seed 1: docs/cluster.md);
## it ends with one line, passed or FAILED, and the time it took
check:
	$(call timed,check)

check-steps:
	$(CHECKER) verify --models tla/models.json --coverage
	$(CHECKER) check --model twophase --rms 3 --progress 0
	$(CHECKER) simulate --seed 1 --seeds 50 --steps 2000 --settle 3000 --transport heartbeat --store memory
	$(CHECKER) simulate --seed 1 --seeds 50 --steps 2000 --settle 3000 --transport logcoord --store memory
	$(CHECKER) simulate --seed 1 --seeds 10 --steps 2000 --settle 3000 --transport heartbeat --store pebble
	$(CHECKER) simulate --seed 1 --seeds 10 --steps 2000 --settle 3000 --transport logcoord --store pebble
	$(CHECKER) lincheck --clients 8 --ops 2000 --seed 1 --timeout 60s
	@rm -rf $(TRACES) && mkdir -p $(TRACES)
	$(CHECKER) lincheck --clients 8 --ops 2000 --seed 1 --timeout 60s --trace $(TRACES)/lincheck.ndjson
	DRAINPROOF_TRACE=$(TRACES)/stress.ndjson $(GO) test -count=1 -run '^TestStressTrace$$' ./impl/eventservice
	$(CHECKER) simulate --seed 1 --seeds 50 --steps 2000 --transport heartbeat --model-scope --trace $(TRACES)
	$(CHECKER) simulate --seed 1 --seeds 50 --steps 2000 --transport logcoord --model-scope --trace $(TRACES)
	$(CHECKER) simulate --seed 1 --seeds 50 --steps 2000 --settle 3000 --transport heartbeat --trace $(TRACES)/full
	$(CHECKER) simulate --seed 1 --seeds 50 --steps 2000 --settle 3000 --transport logcoord --trace $(TRACES)/full
	$(CHECKER) trace -q $(TRACES) $(TRACES)/full
	@rm -rf $(TRACES)
	$(CHECKER) cluster --nodes 3 --seed 1 --duration 20s --upgrade --faults kill,pause,partition,delay

## test: the whole test suite under the race detector; -timeout makes a hung test
## fail in minutes (with its goroutine dump), well under CI's own limit; -pgo=off
## spares a second build of every dependency for cmd/checker's tests (the profile
## changes what the compiler inlines, not what the code does). Without a chromium
## binary the browser tests skip (outside CI): the last line then says so
test:
	@SECONDS=0; echo "$(GO) test -race -pgo=off -count=1 -timeout 12m ./..."; status=0; $(GO) test -race -pgo=off -count=1 -timeout 12m ./... || status=$$?; \
	if [ $$status -eq 0 ]; then echo "make test: passed in $$SECONDS s"; else echo "make test: FAILED after $$SECONDS s"; fi; \
	if [ -z "$$CI" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && \
		! command -v google-chrome >/dev/null 2>&1 && ! command -v headless-shell >/dev/null 2>&1; then \
		echo "make test: the browser tests of cmd/checker were skipped: no chromium on this machine (install it: apt-get install -y chromium)"; \
	fi; exit $$status

## mutate: mutation testing (gremlins' mutants, each judged by the tests
## that reach it, built into one binary per package where they can be:
## internal/mutation/sample -select -schema) over the product, the
## trace validator, spec and modelcheck, judged against the efficacy
## targets and internal/mutation/equivalent.txt; hours on 2 cores, not
## part of CI (docs/perf.md, "Mutation testing")
mutate:
	.ci/mutate.sh

## lint: gofmt, go vet and (when it installs) staticcheck
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -version >/dev/null 2>&1; then \
		$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...; \
	else echo "staticcheck unavailable: skipped"; fi

## bench: checker throughput and memory (the default and large protocol models, with the hash and the sorted
## seen-set lookups side by side, and the large one spilled to disk under a 128 MiB budget; TwoPhase, 9 RMs:
## about ten million states), built with the checker's profile (cmd/checker/default.pgo), as the checker binary is;
## and the spilled set's two candidate stores side by side (the sorted run against Pebble: BenchmarkSpillStore)
bench:
	$(GO) test -pgo=cmd/checker/default.pgo -run '^$$' -bench Drain -benchtime 1x ./modelcheck
	$(GO) test -run '^$$' -bench SpillStore -benchtime 1x ./modelcheck
	$(GO) test -pgo=cmd/checker/default.pgo -run '^$$' -bench . -benchtime 1x ./spec/twophase
	$(CHECKER) check --model twophase --rms 9 --workers 1 --progress 0
	$(CHECKER) check --model twophase --rms 9 --workers 2 --progress 0
	$(CHECKER) check --config tla/MCDrainRegistrationLarge.cfg --workers 1 --progress 0 --lookup hash
	$(CHECKER) check --config tla/MCDrainRegistrationLarge.cfg --workers 1 --progress 0 --lookup sorted
	$(CHECKER) check --config tla/MCDrainRegistrationLarge.cfg --workers 1 --progress 0 --memory 128MiB

## bugs: the bug zoo: each bug switched on (-tags bugs) must make the suite fail
bugs:
	.ci/run_bugs.sh

## tlc: run TLC on the models of tla/models.json (needs TLA2TOOLS=/path/to/tla2tools.jar)
tlc:
	@if [ -z "$(TLA2TOOLS)" ]; then echo "make tlc: set TLA2TOOLS to the path of tla2tools.jar (TLC is not in any package registry; build it from the tlaplus sources, outside this repo)"; exit 2; fi
	$(CHECKER) tlc --models tla/models.json --jar "$(TLA2TOOLS)"

## trace-parity: checker trace against TLC (tla/TraceDrainRegistration.tla) on
## a few hundred traces (the merged per-process traces of simulations among
## them); needs TLA2TOOLS and TLA_COMMUNITY_MODULES (the jar of
## the TLA+ community modules, built from its public sources outside this repo)
trace-parity:
	@if [ -z "$(TLA2TOOLS)" ] || [ -z "$(TLA_COMMUNITY_MODULES)" ]; then echo "make trace-parity: set TLA2TOOLS (tla2tools.jar) and TLA_COMMUNITY_MODULES (CommunityModules-deps.jar)"; exit 2; fi
	$(CHECKER) traceparity --n 30 --steps 80 --free 20 --sim --full

## fuzz: a short fuzzing run of the cfg parser (30 s) and of each gRPC handler
## (FUZZTIME each, 5 s unless set): the node's, the event service's and the
## LogCoordinator's (impl/transport), the coordinator's (impl/daemon);
## .ci/fuzz.sh runs a target again once if Go 1.26's coordinator ends it with
## its deadline race (no failing input)
FUZZTIME ?= 5s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) .ci/fuzz.sh

## pgo: refresh cmd/checker/default.pgo, the CPU profile that Go's profile-guided
## optimisation builds the checker with (go build and go run pick it up), from the
## checker's own runs on the three models of over a million states, one and two workers
pgo:
	@d=$$(mktemp -d) && for c in Large LogCoord BrokersLogCoord; do for w in 1 2; do \
		echo "profiling MCDrainRegistration$$c.cfg with $$w worker(s)"; \
		$(CHECKER) check --config tla/MCDrainRegistration$$c.cfg --workers $$w --progress 0 --cpuprofile $$d/$$c-$$w.prof >/dev/null 2>$$d/log || { cat $$d/log; exit 1; }; \
	done; done && $(GO) tool pprof -proto $$d/*.prof > $$d/merged.pgo && mv $$d/merged.pgo cmd/checker/default.pgo && \
	rm -rf $$d && ls -l cmd/checker/default.pgo

## build: bin/checker, stamped with the VCS revision that checker version prints
build:
	$(GO) build -buildvcs=auto -o bin/checker ./cmd/checker

clean:
	rm -rf tla/states bin

## proto: regenerate the gRPC code of impl/transport/pb (needs protoc from
## Debian's protobuf-compiler, and protoc-gen-go v1.36.12 and
## protoc-gen-go-grpc v1.6.2 from `go install`)
proto:
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" protoc -I impl/transport/pb \
		--go_out=impl/transport/pb --go_opt=paths=source_relative \
		--go-grpc_out=impl/transport/pb --go-grpc_opt=paths=source_relative \
		impl/transport/pb/drainproof.proto

## soak: many seeds, not in CI (.ci/soak.sh): SOAK_SIM_SEEDS simulated seeds per
## transport (1000) and SOAK_SEEDS runs of the real cluster (50: 3 nodes, the
## upgrade, every fault, SOAK_DURATION each, 30s; docs/cluster.md), each run
## split into shards (--shard i/n) that GNU parallel runs SOAK_JOBS at a time
## (1; a loop without parallel), then checker report merge: one verdict per run
SOAK_SEEDS ?= 50
SOAK_JOBS ?= 1
soak:
	SOAK_SEEDS=$(SOAK_SEEDS) SOAK_JOBS=$(SOAK_JOBS) GO=$(GO) .ci/soak.sh
