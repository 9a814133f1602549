#!/usr/bin/env bash
# Quick start: install what is missing, build, and run the default sweep (arguments go to `kvbench sweep`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
exec "$KVBENCH_BUILD_DIR/kvbench" sweep "$@"
