# kvbench_batch_build(target): compiles the target's files in batches of eight (a CMake unity
# build), so that CLI11, nlohmann-json and doctest, each seconds of parsing and code generation
# per file, are compiled once per batch. It is most of a clean build's time on 2 cores, the
# build CI and a newcomer's first command pay for (docs/testing.md#build-time). Files of one
# batch share a unit: names in their anonymous namespaces must not collide.
option(KVBENCH_BATCH_BUILD "Compile the command line, reports and tests in batches of files" ON)

function(kvbench_batch_build target)
  if(KVBENCH_BATCH_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
