# kvbench_provenance: compile definitions that let every result row say which build made it.
find_package(Git QUIET)
set(KVBENCH_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    OUTPUT_VARIABLE _kvbench_sha OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _kvbench_sha_rc ERROR_QUIET)
  if(_kvbench_sha_rc EQUAL 0)
    set(KVBENCH_GIT_COMMIT "${_kvbench_sha}")
  endif()
endif()

add_library(kvbench_provenance INTERFACE)
target_compile_definitions(kvbench_provenance INTERFACE
  KVBENCH_VERSION="${PROJECT_VERSION}"
  KVBENCH_GIT_COMMIT="${KVBENCH_GIT_COMMIT}"
  KVBENCH_BUILD_TYPE="${CMAKE_BUILD_TYPE}"
  KVBENCH_COMPILER="${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
  $<$<BOOL:${KVBENCH_NATIVE}>:KVBENCH_NATIVE_BUILD=1>)
