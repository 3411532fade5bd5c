#!/usr/bin/env bash
# Installs what premortem's tests and demo need on a Debian machine, idempotently:
# the Python kernel side (Debian's ipykernel, numpy, pandas, scikit-learn, torch, ...) for
# /usr/bin/python3 (scikit-image for the real-notebook suite, testdata/realnb), and the Go
# modules. Skips apt-get when everything is already there.
set -euo pipefail

PY=/usr/bin/python3
PKGS=(python3-ipykernel python3-jupyter-client python3-numpy python3-pandas python3-sklearn
      python3-torch python3-matplotlib python3-seaborn python3-statsmodels python3-scipy
      python3-psutil python3-xgboost python3-h5py python3-skimage jupyter-notebook)
# python3-opencv is not installed here: the fallback's cv2 emulation is tested only where it is
# (test_fallback.py skips cv2 without it), because it pulls in VTK and Open MPI (~130 MB
# installed) for one library; h5py is ~4 MB.

probe='import ipykernel, jupyter_client, numpy, pandas, sklearn, torch, matplotlib, seaborn, statsmodels, scipy, xgboost, h5py, skimage, notebook'
if [ -x "$PY" ] && "$PY" -c "$probe" >/dev/null 2>&1; then
  echo "install-deps: Python packages present for $PY"
else
  echo "install-deps: installing Debian packages for $PY: ${PKGS[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${PKGS[@]}" >/dev/null
  "$PY" -c "$probe"
fi

command -v gcc >/dev/null || { echo "install-deps: gcc is needed for cgo (tree-sitter): apt-get install gcc" >&2; exit 2; }
go mod download
echo "install-deps: ok"
