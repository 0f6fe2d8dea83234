#!/usr/bin/env bash
# fuzz.sh runs every native fuzz target in the module for FUZZTIME each.
# Go accepts one -fuzz target per invocation, so the targets run one by one.
# All targets run even after a failure; the failed ones are listed at the end.
# Minimizing a new input is capped too (FUZZMINIMIZETIME, 100 runs by default):
# Go minimizes every input that adds coverage, and in a short run a cap in
# seconds would spend most of the time minimizing instead of fuzzing.
set -euo pipefail

fuzztime=${FUZZTIME:-20s}
failed=()
timeouts=()
ran=0

# fuzz_one runs one target. Go 1.26's fuzzing coordinator can fail a run
# with a bare "context deadline exceeded" as -fuzztime runs out, having
# found nothing: it compares the deadline's error with that of a child
# context not yet cancelled (go.dev/issue/75804, fixed in Go 1.27). Such a
# run writes no failing input, where a crash or a hang always writes one,
# so it is tried again, and after three in a row it is reported as no
# finding rather than failed. Any other failure fails the target.
fuzz_one() {
	local pkg=$1 target=$2 out attempt
	for attempt in 1 2 3; do
		if out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" \
			-fuzzminimizetime "${FUZZMINIMIZETIME:-100x}" "$pkg" 2>&1); then
			printf '%s\n' "$out"
			return 0
		fi
		printf '%s\n' "$out"
		if grep -q 'Failing input written' <<<"$out" || ! grep -q 'context deadline exceeded' <<<"$out"; then
			return 1
		fi
		echo "fuzz: $target: coordinator time-out without a finding (attempt $attempt, go.dev/issue/75804)"
	done
	echo "fuzz: $target: no finding: three coordinator time-outs, no failing input written"
	timeouts+=("$pkg $target")
	return 0
}

# Only packages with test files can hold fuzz targets.
pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...)

for pkg in $pkgs; do
	if ! listing=$(go test -list '^Fuzz' "$pkg"); then
		echo "fuzz: cannot list fuzz targets of $pkg" >&2
		failed+=("$pkg (list)")
		continue
	fi
	for target in $(grep '^Fuzz' <<<"$listing" || true); do
		echo "--- fuzz $pkg $target ($fuzztime)"
		ran=$((ran + 1))
		if ! fuzz_one "$pkg" "$target"; then
			failed+=("$pkg $target")
		fi
	done
done

echo "fuzz: ran $ran target(s)"
if ((${#timeouts[@]})); then
	echo "fuzz: only coordinator time-outs (go.dev/issue/75804), no finding:"
	printf '  %s\n' "${timeouts[@]}"
fi
if ((${#failed[@]})); then
	echo "fuzz: FAILED:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
