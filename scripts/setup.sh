#!/usr/bin/env bash
# Installs what kvbench needs from Debian packages (only what is missing), then builds it
# in Release. Sourced by scripts/run.sh and scripts/test.sh; safe to run again and again.
set -euo pipefail

KVBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KVBENCH_BUILD_DIR="${KVBENCH_BUILD_DIR:-$KVBENCH_ROOT/build}"

# libopenblas-openmp-dev, not libopenblas-dev: kvbench's threads and OpenBLAS's must be one
# OpenMP pool (see cmake/OpenBLASTarget.cmake and the README's "Threads" section).
# python3-matplotlib: plots/kvbench_plot.py, which the test suite runs.
packages=(g++ cmake make git pkg-config libopenblas-openmp-dev libfmt-dev libcli11-dev doctest-dev
          nlohmann-json3-dev libbenchmark-dev python3-matplotlib)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  install_line="apt-get install -y --no-install-recommends ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    sudo_cmd=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo)
  else
    echo "kvbench: missing Debian packages; install them as root, then run this again:" >&2
    echo "  sudo apt-get update && sudo $install_line" >&2
    exit 1
  fi
  echo "kvbench: installing ${missing[*]}" >&2
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S "$KVBENCH_ROOT" -B "$KVBENCH_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
# Build progress goes to stderr: stdout is kvbench's own output.
cmake --build "$KVBENCH_BUILD_DIR" -j "$(nproc)" >&2
