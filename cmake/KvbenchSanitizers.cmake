# Instrumented builds: KVBENCH_SANITIZE runs the test suite under AddressSanitizer (with
# LeakSanitizer) and UndefinedBehaviorSanitizer. The flags go on every target of the build,
# libraries included, so a bad read inside the engine is caught, not only one in a test.

option(KVBENCH_SANITIZE "Build with AddressSanitizer (LeakSanitizer included) and UBSan" OFF)

if(KVBENCH_SANITIZE)
  add_compile_options(
    -fsanitize=address,undefined
    -fno-sanitize-recover=all   # the first UB report fails the test instead of scrolling past
    -fno-omit-frame-pointer     # readable stacks in the reports
    -g)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # ASan's instrumentation misleads GCC 12's flow analysis: it warns that libstdc++'s own
    # std::regex and std::function members "may be used uninitialized" (GCC bug 105562).
    # The Release build keeps the warning.
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()
