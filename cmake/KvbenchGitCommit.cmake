# Script mode (cmake -P): writes OUT, a header defining KVBENCH_GIT_COMMIT, at every build,
# but touches it only when the commit changes, so an unchanged tree rebuilds nothing.
# "-dirty" marks a build of uncommitted changes: its rows are not reproducible from the SHA.
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
    WORKING_DIRECTORY ${SOURCE_DIR}
    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE described_rc ERROR_QUIET)
  if(described_rc EQUAL 0)
    set(commit "${described}")
  endif()
endif()
set(content "// Generated at build time by cmake/KvbenchGitCommit.cmake.\n#pragma once\n#define KVBENCH_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" previous)
endif()
if(NOT "${previous}" STREQUAL "${content}")
  file(WRITE "${OUT}" "${content}")
endif()
