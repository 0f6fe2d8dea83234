#!/usr/bin/env bash
# fuzz.sh runs every native fuzz target in the module for FUZZTIME each.
# Go accepts one -fuzz target per invocation, so the targets run one by one.
# All targets run even after a failure; the failed ones are listed at the end.
# Minimizing a new input is capped too (FUZZMINIMIZETIME), so a run stays bounded.
set -euo pipefail

fuzztime=${FUZZTIME:-20s}
failed=()
ran=0

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
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "${FUZZMINIMIZETIME:-5s}" "$pkg"; then
			failed+=("$pkg $target")
		fi
	done
done

echo "fuzz: ran $ran target(s)"
if ((${#failed[@]})); then
	echo "fuzz: FAILED:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
