FUZZTIME ?= 20s

.DEFAULT_GOAL := build
.PHONY: build test peers generate check-generate lint fuzz bench instr pgo soak ci

build:
	go build ./...

# The allocation tests (names with Alloc) skip under the race detector,
# which allocates: the second run takes them without it, one package at a
# time, so that each measures a process with nothing else running.
#
# -pgo=off: cmd/sluice's profile (default.pgo) would otherwise have go test
# compile the whole tree a second time for that one package, about two
# minutes a run on 2 cores; it changes what the compiler inlines, not what
# the code does. The shipped binary, built with the profile, is still built
# and run, by cmd/sluice's TestSIGTERM.
#
# internal/atomicx's stores differ with the race detector: the first run,
# under -race, builds its portable stores (sync/atomic; the race tag selects
# them, as -tags sluice_portable does without -race, and atomicx's
# TestPortable checks it), so the detector checks the ring, the engine and
# the metrics with those. The third run takes the packages the plain
# release stores of amd64 are in, and the engine built on them, whole and
# without the detector, as they ship. The atomicx package doc says why the
# plain stores are correct.
test: peers
	go test -pgo=off -race -count=1 ./...
	go test -pgo=off -count=1 -p 1 -run 'Alloc' ./...
	go test -pgo=off -count=1 ./internal/atomicx ./engine/ring ./engine ./engine/telemetry

# peers installs the real MCP peers (Node 22, the TypeScript SDK, the
# conformance suite) that the interop tests run; see .ci/peers.sh.
peers:
	.ci/peers.sh

generate:
	go generate ./...

# check-generate expects a clean tree, as on a fresh CI clone: afterwards no
# tracked file may differ and no untracked file may have appeared.
check-generate: generate
	@git diff --exit-code || { echo 'make generate changed tracked files: commit the regenerated code'; exit 1; }
	@dirty=$$(git status --porcelain); \
	if [ -n "$$dirty" ]; then printf 'tree not clean after make generate:\n%s\n' "$$dirty"; exit 1; fi

lint:
	@unformatted=$$(git ls-files -z '*.go' | xargs -0 -r gofmt -l) || exit 1; \
	if [ -n "$$unformatted" ]; then printf 'gofmt: these files are not formatted (run gofmt -w):\n%s\n' "$$unformatted"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...

fuzz:
	FUZZTIME=$(FUZZTIME) .ci/fuzz.sh

bench:
	go test -run '^$$' -bench . -benchmem ./...
	bench/http/run.sh
	bench/mcp/run.sh

# instr counts the instructions per tools/call through the MCP gateway
# under valgrind: a number that repeats to 0.5 %, where bench's timings move ±20 %.
instr:
	bench/mcp/instr.sh

# pgo rewrites cmd/sluice/default.pgo, the profile sluice is built with
# (profile-guided optimization), from the MCP gateway under load.
pgo:
	bench/mcp/pgo.sh

# soak runs the hardening attacks (bench/soak/README.md) against sluice
# start with a gateway config, each for at most SOAK_DURATION; not part of
# test or ci.
SOAK_DURATION ?= 10s
soak:
	go run ./bench/soak -duration $(SOAK_DURATION)

ci:
	@echo '==> make test' && $(MAKE) --no-print-directory test
	@echo '==> make lint' && $(MAKE) --no-print-directory lint
	@echo '==> make check-generate' && $(MAKE) --no-print-directory check-generate
	@echo '==> make fuzz FUZZTIME=5s' && $(MAKE) --no-print-directory fuzz FUZZTIME=5s
