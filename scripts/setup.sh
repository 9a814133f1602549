#!/usr/bin/env bash
# Installs what kvbench needs from Debian packages (only what is missing), then builds it.
# Sourced by scripts/run.sh, test.sh, test-sanitizers.sh and fuzz.sh; safe to run again and again.
# What the sourcing script may set first:
#   KVBENCH_BUILD_DIR      build directory (default build/)
#   KVBENCH_CMAKE_ARGS     array of extra configure arguments (default: a Release build)
#   KVBENCH_BUILD_TARGETS  array of targets to build (default: all)
#   KVBENCH_EXTRA_PACKAGES array of Debian packages that build needs beyond the usual ones
#   KVBENCH_CPU_LOCK       a flock file that builds and timed runs wait for, on a shared machine
set -euo pipefail

KVBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KVBENCH_BUILD_DIR="${KVBENCH_BUILD_DIR:-$KVBENCH_ROOT/build}"
if ! declare -p KVBENCH_CMAKE_ARGS >/dev/null 2>&1; then KVBENCH_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release); fi
if ! declare -p KVBENCH_BUILD_TARGETS >/dev/null 2>&1; then KVBENCH_BUILD_TARGETS=(); fi
if ! declare -p KVBENCH_EXTRA_PACKAGES >/dev/null 2>&1; then KVBENCH_EXTRA_PACKAGES=(); fi

# Runs a command holding $KVBENCH_CPU_LOCK when it is set, so that builds and timings of
# several people on one machine do not share its cores.
kvbench_locked() {
  if [[ -n "${KVBENCH_CPU_LOCK:-}" ]]; then
    flock "$KVBENCH_CPU_LOCK" "$@"
  else
    "$@"
  fi
}

# libopenblas-openmp-dev, not libopenblas-dev: kvbench's threads and OpenBLAS's must be one
# OpenMP pool (see cmake/OpenBLASTarget.cmake and the README's "Threads" section).
# python3-matplotlib: plots/kvbench_plot.py, which the test suite runs.
# libboost-math-dev: the normal distribution behind kvbench compare's U test (header-only).
# libhwy-dev: bench/bench_highway.cpp, the Highway port measured against the hand-written kernels.
packages=(g++ cmake make git pkg-config libopenblas-openmp-dev libfmt-dev libcli11-dev doctest-dev
          nlohmann-json3-dev libbenchmark-dev libhwy-dev python3-matplotlib libboost-math-dev "${KVBENCH_EXTRA_PACKAGES[@]}")

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

cmake -S "$KVBENCH_ROOT" -B "$KVBENCH_BUILD_DIR" "${KVBENCH_CMAKE_ARGS[@]}" >/dev/null
build_targets=()
if ((${#KVBENCH_BUILD_TARGETS[@]} > 0)); then build_targets=(--target "${KVBENCH_BUILD_TARGETS[@]}"); fi
# Build progress goes to stderr: stdout is kvbench's own output.
kvbench_locked cmake --build "$KVBENCH_BUILD_DIR" -j "$(nproc)" "${build_targets[@]}" >&2
