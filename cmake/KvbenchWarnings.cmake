# kvbench_warnings: an INTERFACE target carrying the project's warning flags.
add_library(kvbench_warnings INTERFACE)
target_compile_options(kvbench_warnings INTERFACE
  -Wall                  # the common set
  -Wextra                # unused parameters, missing initializers
  -Wpedantic             # no GNU extensions in portable code
  -Wshadow               # a local hiding a member or outer name is a bug magnet
  -Wconversion           # dims are size_t, BLAS takes int: every narrowing must be explicit
  -Wsign-conversion      # same, for signed/unsigned mixes in index math
  -Wold-style-cast       # casts should say which kind they are
  -Wnon-virtual-dtor     # polymorphic deletion must be safe
  $<$<BOOL:${KVBENCH_WERROR}>:-Werror>
)
