# kvbench_provenance: what lets every result row say which build made it.
# The commit is read at every build (not only at configure time), so rows never carry a stale SHA.
set(KVBENCH_GENERATED_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated)
add_custom_target(kvbench_git_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}
          -DOUT=${KVBENCH_GENERATED_DIR}/kvbench_git_commit.hpp
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/KvbenchGitCommit.cmake
  BYPRODUCTS ${KVBENCH_GENERATED_DIR}/kvbench_git_commit.hpp
  COMMENT "Reading the git commit for provenance")

add_library(kvbench_provenance INTERFACE)
target_include_directories(kvbench_provenance INTERFACE ${KVBENCH_GENERATED_DIR})
target_compile_definitions(kvbench_provenance INTERFACE
  KVBENCH_VERSION="${PROJECT_VERSION}"
  KVBENCH_BUILD_TYPE="${CMAKE_BUILD_TYPE}"
  KVBENCH_COMPILER="${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
  KVBENCH_ARCH="${KVBENCH_ARCH}")
