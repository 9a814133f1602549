#!/usr/bin/env bash
# Builds the kernels for the AVX2 class (x86-64-v3, into build-v3/), for AVX-512 without VNNI
# (x86-64-v4, into build-v4/: the integer tiles' products through vpmaddwd, as on Skylake-SP) and
# for a CPU without AVX (x86-64-v2, the portable paths, into build-v2/), and runs the kernel
# test cases of each (kvbench_kernel_tests: the kernels against their naive twins, the
# decoder, the runner), so every x86 kernel path is tested whatever CPU runs this. The native
# build is scripts/test.sh's, so a level whose kernels the native build already runs (the AVX2
# path on an AVX2 CPU without AVX-512, the VNNI-less path on an AVX-512 CPU without VNNI) is
# skipped, and so is one the CPU cannot run.
# Builds run under KVBENCH_CPU_LOCK (a flock file) when it is set, for machines that several
# people share. Arguments name the levels to run (x86-64-v3, x86-64-v4, x86-64-v2); none
# means all three.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc)"

source "$root/scripts/common.sh"  # kvbench_locked

has_flag() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
arches=()
if has_flag avx2 && has_flag fma && has_flag avx512f; then
  arches+=(x86-64-v3)
elif has_flag avx2; then
  echo "kvbench: skipping x86-64-v3: the native build (scripts/test.sh) already runs the AVX2 kernels" >&2
else
  echo "kvbench: skipping x86-64-v3: this CPU has no AVX2" >&2
fi
if has_flag avx512f && has_flag avx512bw && has_flag avx512_vnni; then
  arches+=(x86-64-v4)
elif has_flag avx512f; then
  echo "kvbench: skipping x86-64-v4: the native build (scripts/test.sh) already runs the AVX-512 kernels without VNNI" >&2
else
  echo "kvbench: skipping x86-64-v4: this CPU has no AVX-512" >&2
fi
arches+=(x86-64-v2)
if (($# > 0)); then
  wanted=()
  for arch in "$@"; do
    if [[ "$arch" != x86-64-v3 && "$arch" != x86-64-v4 && "$arch" != x86-64-v2 ]]; then
      echo "kvbench: error: test-isa.sh: level '$arch' must be x86-64-v3, x86-64-v4 or x86-64-v2" >&2
      exit 2
    fi
    for runnable in "${arches[@]}"; do
      if [[ "$arch" == "$runnable" ]]; then wanted+=("$arch"); fi
    done
  done
  arches=("${wanted[@]}")
  if ((${#arches[@]} == 0)); then echo "kvbench: none of the levels asked for runs here" >&2; fi
fi

for arch in "${arches[@]}"; do
  build="$root/build-${arch##*-}"
  echo "kvbench: building and testing KVBENCH_ARCH=$arch in ${build#"$root"/}" >&2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKVBENCH_ARCH="$arch" \
    -DKVBENCH_BUILD_BENCH=OFF >/dev/null
  kvbench_locked cmake --build "$build" -j "$jobs" --target kvbench_kernel_tests >&2
  # The kernel cases only: the rest of the suite (command line, reports, plans) runs no
  # kernel code that these do not, and takes about three times as long to build (270 s
  # against 77 s on a 2-core Zen 5).
  kvbench_locked "$build/tests/kvbench_kernel_tests"
done
