#!/usr/bin/env bash
# Runs every Go fuzz target briefly (default 5s each): go test accepts one -fuzz target per run.
#
# A target fails on a real finding: Go writes the failing input under testdata/fuzz and says
# so. Go 1.26's fuzzing coordinator can also fail a run at the -fuzztime deadline with a bare
# "context deadline exceeded" and no input (golang/go#75804, a shutdown race under CPU load,
# fixed in Go 1.27): such a run is not a finding, so the target's seeds and corpus are then
# replayed deterministically, and that replay decides.
set -euo pipefail
dur=${1:-5s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for t in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $t ($dur)"
    rc=0
    out=$(go test -run='^$' -fuzz="^$t\$" -fuzztime="$dur" "$pkg" 2>&1) || rc=$?
    printf '%s\n' "$out"
    if [ "$rc" -ne 0 ]; then
      if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
        echo "fuzz: $t: the coordinator's deadline race (golang/go#75804), no failing input; replaying its seeds and corpus"
        go test -count=1 -run="^$t\$" "$pkg"
      else
        exit "$rc"
      fi
    fi
  done
done
