#!/usr/bin/env bash
# Cross-builds kvbench's kernels for 64-bit ARM (aarch64, the portable path with NEON, as on
# Graviton or Ampere servers), checks in the disassembly that their inner loops are vector
# code, and runs the kernel test cases (kvbench_kernel_tests: every kernel against its naive
# twin, the cached step against the uncached forward) under user-mode QEMU, into build-arm64/.
# The emulator checks results, not speed. On an arm64 machine scripts/test.sh runs the whole
# suite natively instead; this is for x86 machines, including CI's when its budget allows.
# Installs, as root, Debian's aarch64 cross compiler, qemu-user and the arm64 builds of the
# libraries (adding arm64 as a dpkg architecture). KVBENCH_CPU_LOCK as in scripts/test-isa.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-arm64"

source "$root/scripts/common.sh"  # kvbench_locked, kvbench_install_packages

if [[ "$(uname -m)" == aarch64 ]]; then
  echo "kvbench: this is an arm64 machine: scripts/test.sh builds and tests the arm64 kernels natively" >&2
  exit 0
fi

# The build tools, the cross compiler and the emulator; the architecture-independent headers
# (CLI11, doctest, nlohmann-json); the arm64 builds of the libraries the kernel tests link.
packages=(cmake make g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user
          libcli11-dev doctest-dev nlohmann-json3-dev
          libopenblas-openmp-dev:arm64 libfmt-dev:arm64 libboost-dev:arm64 libgomp1:arm64 libsqlite3-dev:arm64)
kvbench_install_packages --arch arm64 "${packages[@]}"

echo "kvbench: cross-building the kernel test cases for aarch64 in ${build#"$root"/}" >&2
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DKVBENCH_ARCH=generic -DKVBENCH_BUILD_BENCH=OFF >/dev/null
kvbench_locked cmake --build "$build" -j "$(nproc)" --target kvbench_kernel_tests >&2

# The portable kernels are plain C++ and GCC vector extensions, so whether an ARM user gets
# vector code is the compiler's call: every instantiation of the small-M projection's portable
# tile must multiply-add four lanes at a time (fmla on .4s), and the grouped attention kernel
# must be mostly vector code.
objects="$build/src/engine/CMakeFiles/kvbench_engine.dir"
tiles=$(aarch64-linux-gnu-objdump -d --no-show-raw-insn -C "$objects/kernels/small_m_gemm.cpp.o" |
  awk '/^[0-9a-f]+ <.*ScalarIsa::tile</ { name = $0; n_tiles++; next }
       /^[0-9a-f]+ </ { name = "" }
       name != "" && /fmla[ \t]+v[0-9]+\.4s/ { vector[name] = 1 }
       END { n_vector = 0; for (t in vector) n_vector++; print n_tiles + 0, n_vector }')
read -r n_tiles n_vector_tiles <<<"$tiles"
if ((n_tiles == 0 || n_vector_tiles < n_tiles)); then
  echo "kvbench: error: test-arm64.sh: $n_vector_tiles of the $n_tiles portable small-M tiles use vector fmla" >&2
  exit 1
fi
grouped_vector=$(aarch64-linux-gnu-objdump -d --no-show-raw-insn "$objects/kernels/attention_grouped.cpp.o" | grep -cE '\bv[0-9]+\.4s' || true)
grouped_scalar=$(aarch64-linux-gnu-objdump -d --no-show-raw-insn "$objects/kernels/attention_grouped.cpp.o" |
  grep -cE '\bf(add|mul|mla|madd|sub|max)[ \t]+s[0-9]+,' || true)
if ((grouped_vector <= grouped_scalar)); then
  echo "kvbench: error: test-arm64.sh: attention_grouped.cpp has $grouped_vector vector and $grouped_scalar scalar float instructions" >&2
  exit 1
fi
echo "kvbench: aarch64 vector code: all $n_tiles portable small-M tiles use fmla on .4s;" \
     "attention_grouped.cpp has $grouped_vector vector and $grouped_scalar scalar float instructions" >&2

# Less the two long-context --verify cases (test suite long_context): their O(N²) prefill, 5 s
# natively, runs for many minutes emulated, and the shorter contexts run the same code.
kvbench_locked qemu-aarch64 -L / "$build/tests/kvbench_kernel_tests" --test-suite-exclude=long_context
