#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite (unit tests and CLI tests).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
kvbench_locked ctest --test-dir "$KVBENCH_BUILD_DIR" --output-on-failure -j "$(nproc)"
