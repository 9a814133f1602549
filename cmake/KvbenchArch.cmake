# kvbench_arch: an INTERFACE target carrying the instruction-set flags of the kernels.
add_library(kvbench_arch INTERFACE)
if(KVBENCH_NATIVE)
  target_compile_options(kvbench_arch INTERFACE -march=native)
endif()
