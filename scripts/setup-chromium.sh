#!/usr/bin/env bash
# Install Debian's chromium when it is missing: the test crates/ltr-cli/tests/report_html.rs opens the report.html
# of `ltr experiment` in headless chromium (a screenshot and the page after its script ran). Idempotent and quiet
# when chromium is there; `cargo xtask test` runs it before the Rust tests.
#
# Without apt-get it only says so: the test then prints SKIP and passes. Chromium refuses to run as root without
# --no-sandbox, which the test passes.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
status=0
"$(dirname "$0")/apt-install.sh" setup-chromium --no-recommends chromium || status=$?
if [ "$status" -eq 2 ]; then
    echo "setup-chromium: no chromium and no apt-get; install chromium with your package manager to run the" \
        "report.html screenshot test (it skips without it)" >&2
    exit 0
fi
exit "$status"
