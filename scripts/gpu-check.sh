#!/usr/bin/env bash
# Runs premortem's CUDA path end to end on a machine with a GPU and a CUDA build of torch
# for /usr/bin/python3 (or $PYTHON as the kernel's python): a kernel that has initialised
# CUDA is shadow-run on meta tensors (--shadow-tensors auto), and the child never touches
# the GPU. Prints one PASS/FAIL line per check; exits 1 when any fails, 2 without a GPU.
#
#   scripts/gpu-check.sh            # builds ./premortem from this tree first
set -uo pipefail

cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "gpu-check: $PY has no CUDA device (torch.cuda.is_available() is False): nothing to check" >&2
  exit 2
fi
go build -o /tmp/premortem-gpu-check ./cmd/premortem || exit 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# notebook NAME TARGET: a notebook whose first cell (run) initialises CUDA and puts a model
# and data on it, and whose second cell (not run) is TARGET.
notebook() {
  "$PY" - "$dir/$1.ipynb" "$2" <<'PYEOF'
import json, sys
setup = ("import torch\nfrom torch import nn\ndevice = torch.device('cuda')\n"
         "model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)\n"
         "X = torch.randn(256, 12, device=device)\ny = torch.randint(0, 2, (256,), device=device)\n"
         "Xc = torch.randn(256, 10)\nopt = torch.optim.Adam(model.parameters())")
cells = [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": setup},
         {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": sys.argv[2]}]
nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": cells}
json.dump(nb, open(sys.argv[1], "w"))
PYEOF
}

fails=0
# check NAME WANT-VERDICT WANT-SUBSTRING TARGET
check() {
  notebook "$1" "$4"
  out=$(/tmp/premortem-gpu-check check --quiet --format json --cell 1 "$dir/$1.ipynb" 2>&1)
  verdict=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["verdict"])' 2>/dev/null)
  if [ "$verdict" = "$2" ] && printf '%s' "$out" | grep -q -- "$3"; then
    echo "PASS $1: $verdict"
  else
    echo "FAIL $1: verdict ${verdict:-?} (want $2, output containing \"$3\"): $(printf '%s' "$out" | head -c 600)"
    fails=$((fails + 1))
  fi
}

check cuda-kernel-is-meta unknown "shadow tensors: meta (auto" "z = model(X[:, :10])"
check shape-bug crash "mat1 and mat2 shapes cannot be multiplied" "for epoch in range(20):
    out = model(X)
    loss = nn.functional.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()"
check shape-bug-twin unknown "0 CUDA calls" "for epoch in range(20):
    out = model(X[:, :10])
    loss = nn.functional.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()"
check device-mismatch crash "found at least two devices" "out = model(Xc)"
check device-mismatch-twin unknown "0 CUDA calls" "out = model(Xc.to(device))"
check cuda-call-guarded unknown "CUDA call torch.cuda.memory_allocated" "m = torch.cuda.memory_allocated()"
[ "$fails" -eq 0 ] || exit 1
