#!/usr/bin/env bash
# Runs once, as root, when Gradescope builds the image.
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
if [ -z "${CAPTIONKIT_SKIP_APT:-}" ] && ! python3 -m venv --help >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq python3 python3-venv python3-pip util-linux
fi
python3 -m venv "$ROOT/venv"
PY="$ROOT/venv/bin/python"
"$PY" -m pip install --quiet --upgrade pip || true
# CPU-only torch: PyTorch's CPU index serves torch==X+cpu, preferred over PyPI's CUDA build of X.
INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
if "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=5)" "$INDEX" 2>/dev/null; then
    "$PY" -m pip install --quiet --extra-index-url "$INDEX" "torch==@TORCH_VERSION@"
else
    "$PY" -m pip install --quiet "torch==@TORCH_VERSION@"
fi
# Editable: the kit stays in source/ (root-only below), and site-packages, which the worker's interpreter reads,
# holds only a pointer to it: no reference, check or hidden seed, and no RECORD listing their hashes. hypothesis at
# the release the zip was built with: the cases each check draws depend on it.
"$PY" -m pip install --quiet -e "$ROOT/source[oracles]" "hypothesis==@HYPOTHESIS_VERSION@"
# Everything of the kit that a student must not read is root-only; the venv stays world-readable (but for the
# BLEU oracles, made root-only by detect() below).
chmod -R go-rwx "$ROOT/source"
chmod 755 "$ROOT/venv"
"$PY" -m autograder.grader.isolation   # the sandbox users, created now rather than while grading; hidden folders root's
"$PY" -c "from autograder.grader.isolation import detect; print(detect().note)"
# Build the hidden data's encoder cache once, so each run starts from it.
mkdir -p "$ROOT/cache" && chmod 700 "$ROOT/cache"
CAPTIONKIT_CACHE="$ROOT/cache" "$PY" -c "
import tempfile, torch
torch.set_num_threads(1)
from autograder.grader.context import GradingContext
GradingContext(tempfile.mkdtemp()).data
print('hidden data cached')"
