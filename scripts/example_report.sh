#!/usr/bin/env bash
# Regenerate docs/examples/report.html (the feedback report of the bundled sample submission) and its screenshot
# docs/examples/report.png (headless Chromium, Debian package `chromium`). tests/grader/test_report.py checks the report
# still has every part and check.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m autograder demo --report docs/examples/report.html
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"${CHROMIUM:-chromium}" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$profile" --virtual-time-budget=10000 --window-size=1150,3500 \
    --screenshot=docs/examples/report.png "file://$PWD/docs/examples/report.html" 2>/dev/null
echo "wrote docs/examples/report.html and docs/examples/report.png"
