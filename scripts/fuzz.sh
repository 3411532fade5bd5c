#!/usr/bin/env bash
# Runs every Go fuzz target briefly (default 5s each): go test accepts one -fuzz target per run.
set -euo pipefail
dur=${1:-5s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for t in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $t ($dur)"
    go test -run='^$' -fuzz="^$t\$" -fuzztime="$dur" "$pkg"
  done
done
