#!/usr/bin/env bash
# Create (or reuse) the kit's virtual environment in .venv: CPU-only torch, then the kit and its tests' needs.
# Usage: bash scripts/bootstrap.sh        Environment: PYTHON (default python3), TORCH_VERSION, TORCH_CPU_INDEX.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
VENV_PY=.venv/bin/python
"$VENV_PY" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true

# A plain `pip install torch` on Linux pulls a CUDA build of several GB. PyTorch's CPU index serves
# `torch==X+cpu`, which pip prefers over PyPI's `torch==X` for the same release.
if ! "$VENV_PY" -c "import torch" >/dev/null 2>&1; then
    if "$VENV_PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=5)" \
            "$TORCH_CPU_INDEX" >/dev/null 2>&1; then
        "$VENV_PY" -m pip install --quiet --extra-index-url "$TORCH_CPU_INDEX" "torch==$TORCH_VERSION"
    else
        echo "bootstrap: $TORCH_CPU_INDEX is not reachable; installing torch==$TORCH_VERSION from the configured index"
        "$VENV_PY" -m pip install --quiet "torch==$TORCH_VERSION"
    fi
fi
"$VENV_PY" -m pip install --quiet -e ".[oracles,notebooks,test,cluster,staff]"
# As root, the unprivileged users that grading runs student code as (created here, never while grading), and this
# checkout's solutions/ and hidden folders made root's alone (every clone set up so is closed to those users).
if [ "$(id -u)" = 0 ]; then
    "$VENV_PY" -m autograder.grader.isolation
fi
"$VENV_PY" -c "import torch; print('bootstrap: torch', torch.__version__, '| CUDA build' if torch.version.cuda else '| CPU build')"
