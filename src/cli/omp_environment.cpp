// libgomp reads OMP_NUM_THREADS in its constructor, before main(): a value it cannot use ("lots",
// "0") gets a line of its own on stderr ("libgomp: Invalid value for environment variable
// OMP_NUM_THREADS") and is then ignored. kvbench refuses such a value itself, naming the option
// it is the default of. So the value is read first, at the one point that comes before every
// shared library's constructor: ELF's .preinit_array, run by the dynamic loader for the
// executable alone. A value libgomp would ignore anyway is taken out of the environment there.
#include "cli/omp_environment.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kvbench {

namespace {

constexpr char omp_threads_prefix[] = "OMP_NUM_THREADS=";

// Constant-initialised, so set before any constructor could run.
const char* omp_threads_at_start = nullptr;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// libgomp's rule for OMP_NUM_THREADS (GCC's libgomp/env.c, parse_unsigned_long_list): a comma
// separated list of whole numbers above 0, blanks around each.
bool libgomp_takes(const char* text) {
    for (;;) {
        while (is_blank(*text)) ++text;
        if (*text == '-') return false;
        char* end = nullptr;
        errno = 0;
        const unsigned long count = std::strtoul(text, &end, 10);
        if (end == text || errno != 0 || count == 0) return false;
        text = end;
        while (is_blank(*text)) ++text;
        if (*text == '\0') return true;
        if (*text != ',') return false;
        ++text;
    }
}

// Works on the loader's envp, the array environ points to, rather than through getenv() and
// unsetenv(): at this point the C library has not necessarily run its own initialisation.
void hold_back_what_libgomp_refuses(int, char**, char** envp) {
    if (envp == nullptr) return;
    for (char** entry = envp; *entry != nullptr; ++entry) {
        if (std::strncmp(*entry, omp_threads_prefix, sizeof omp_threads_prefix - 1) != 0) continue;
        omp_threads_at_start = *entry + sizeof omp_threads_prefix - 1;
        if (libgomp_takes(omp_threads_at_start)) return;
        for (char** rest = entry; *rest != nullptr; ++rest) rest[0] = rest[1];
        return;
    }
}

}  // namespace

// `used` keeps the entry when nothing names it: the loader is its only caller.
__attribute__((section(".preinit_array"), used)) void (*const kvbench_hold_back_omp_threads)(int, char**, char**) =
    &hold_back_what_libgomp_refuses;

const char* omp_num_threads_at_start() { return omp_threads_at_start; }

}  // namespace kvbench
