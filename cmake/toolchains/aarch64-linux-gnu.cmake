# Cross-compiling kvbench for 64-bit ARM Linux with Debian's cross compiler and arm64 libraries
# (scripts/test-arm64.sh installs both). CMAKE_LIBRARY_ARCHITECTURE makes find_package and
# cmake/OpenBLASTarget.cmake look in /usr/lib/aarch64-linux-gnu, where multiarch puts them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The test programs run under user-mode QEMU. Its root is /, not /usr/aarch64-linux-gnu: the
# cross toolchain's C library there may be an older build than the arm64 libc6 the programs
# link, and a loader from one with the other hung in pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
