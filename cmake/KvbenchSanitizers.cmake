# Instrumented builds. KVBENCH_SANITIZE runs the test suite under AddressSanitizer (with
# LeakSanitizer) and UndefinedBehaviorSanitizer; KVBENCH_FUZZ builds the libFuzzer harnesses
# of fuzz/ with the same two sanitizers. The flags go on every target of the build, libraries
# included, so a bad read inside the engine is caught, not only one in a test.

option(KVBENCH_SANITIZE "Build with AddressSanitizer (LeakSanitizer included) and UBSan" OFF)
option(KVBENCH_FUZZ "Build the libFuzzer harnesses of fuzz/ (needs clang)" OFF)

if(KVBENCH_SANITIZE OR KVBENCH_FUZZ)
  add_compile_options(
    -fsanitize=address,undefined
    -fno-sanitize-recover=all   # the first UB report fails the test instead of scrolling past
    -fno-omit-frame-pointer     # readable stacks in the reports
    -g1)                        # file and line in each frame; full debug info (-g) costs
                                # 15 % more compile time for variables nobody reads in CI
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # ASan's instrumentation misleads GCC 12's flow analysis: it warns that libstdc++'s own
    # std::regex and std::function members "may be used uninitialized" (GCC bug 105562).
    # The Release build keeps the warning.
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()

if(KVBENCH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "KVBENCH_FUZZ needs clang for libFuzzer: configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Coverage feedback from every library; only the harnesses link libFuzzer's main (fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
