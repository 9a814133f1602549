# kvbench_arch: an INTERFACE target carrying the instruction-set flags of the kernels.
#
# KVBENCH_ARCH picks the instruction set the kernels are compiled for, and so which of their
# paths (AVX-512, AVX2+FMA or portable) the build contains; the engine's kernel_isa() names
# the one that runs, and every result row records it.
#   native     this machine's CPU (-march=native), the default: the fastest build here
#   x86-64-v4  AVX-512 (F, BW, CD, DQ, VL)
#   x86-64-v3  AVX2 + FMA: the AVX2 paths, buildable and testable on an AVX-512 machine
#   x86-64-v2  SSE4.2, no AVX: the portable paths, as a CPU without AVX2 (or ARM) gets them
#   generic    no -march flag: the compiler's default target
# KVBENCH_NATIVE=OFF, the option this replaces, still means generic.
set(kvbench_arch_values native x86-64-v4 x86-64-v3 x86-64-v2 generic)
if(DEFINED KVBENCH_NATIVE AND NOT KVBENCH_NATIVE AND NOT DEFINED KVBENCH_ARCH)
  set(kvbench_arch_default generic)
else()
  set(kvbench_arch_default native)
endif()
set(KVBENCH_ARCH ${kvbench_arch_default} CACHE STRING
    "Instruction set of the kernels: native, x86-64-v4, x86-64-v3, x86-64-v2 or generic")
set_property(CACHE KVBENCH_ARCH PROPERTY STRINGS ${kvbench_arch_values})
if(NOT KVBENCH_ARCH IN_LIST kvbench_arch_values)
  message(FATAL_ERROR "KVBENCH_ARCH=${KVBENCH_ARCH}: must be one of ${kvbench_arch_values}")
endif()

add_library(kvbench_arch INTERFACE)
if(NOT KVBENCH_ARCH STREQUAL "generic")
  # -mtune follows -march for the x86-64-vN levels ("generic" tuning), so the scheduling of a
  # v3 build does not depend on the machine that compiled it.
  target_compile_options(kvbench_arch INTERFACE -march=${KVBENCH_ARCH})
endif()
message(STATUS "kvbench: kernels built for KVBENCH_ARCH=${KVBENCH_ARCH}")
