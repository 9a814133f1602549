# OpenBLAS::OpenBLAS: Debian's OpenMP build of OpenBLAS as an imported target.
#
# Why the OpenMP build: kvbench's own kernels are parallelised with OpenMP, and
# OpenBLAS built with USE_OPENMP=1 runs on the same libgomp thread pool. One
# pool means no oversubscription, and a BLAS call made inside a parallel region
# runs single-threaded instead of spawning a second team. The pthread build has
# its own pool, which would fight the OpenMP one for the two cores.
#
# Debian's OpenBLASConfig.cmake is an alternatives link that may point at the
# pthread or serial build, and it sets only variables, so we look in the
# variant's own directories first.
set(KVBENCH_OPENBLAS_VARIANT "openblas-openmp" CACHE STRING
    "Debian OpenBLAS variant directory (openblas-openmp, openblas-pthread, openblas-serial)")

find_path(OpenBLAS_CBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/${KVBENCH_OPENBLAS_VARIANT}
  NO_DEFAULT_PATH)
find_library(OpenBLAS_LIBRARY NAMES openblas
  PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/${KVBENCH_OPENBLAS_VARIANT}
  NO_DEFAULT_PATH)

if(NOT OpenBLAS_CBLAS_INCLUDE_DIR OR NOT OpenBLAS_LIBRARY)
  message(FATAL_ERROR
    "OpenBLAS (${KVBENCH_OPENBLAS_VARIANT}) not found. On Debian: "
    "apt-get install lib${KVBENCH_OPENBLAS_VARIANT}-dev")
endif()

add_library(OpenBLAS::OpenBLAS INTERFACE IMPORTED)
set_target_properties(OpenBLAS::OpenBLAS PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_CBLAS_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${OpenBLAS_LIBRARY}")
message(STATUS "OpenBLAS: ${OpenBLAS_LIBRARY}")
