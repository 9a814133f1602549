// Page-aligned storage, advised into transparent huge pages when large (docs/measuring.md, "Huge pages").
#include "kvbench/engine/page_aligned.hpp"

#include <cstdint>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kvbench {

namespace {

constexpr std::align_val_t small_alignment{4096};
constexpr std::align_val_t huge_alignment{huge_page_bytes};

}  // namespace

void* allocate_page_aligned(std::size_t bytes) {
    if (bytes < huge_page_bytes) return ::operator new(bytes, small_alignment);
    void* storage = ::operator new(bytes, huge_alignment);
#if defined(MADV_HUGEPAGE)
    // Advice only: where the kernel has no transparent huge pages, or they are set to `never`,
    // the buffer keeps 4 KiB pages and works the same, a little slower.
    (void)::madvise(storage, bytes, MADV_HUGEPAGE);
#endif
    return storage;
}

void free_page_aligned(void* storage, std::size_t bytes) noexcept {
    ::operator delete(storage, bytes < huge_page_bytes ? small_alignment : huge_alignment);
}

bool huge_pages_advised(const void* storage, std::size_t bytes) {
    if (bytes < huge_page_bytes) return false;
    // /proc/self/smaps: a header line per mapping ("start-end perms ..."), then fields, among
    // them "VmFlags:", where "hg" marks a range advised MADV_HUGEPAGE.
    std::ifstream smaps("/proc/self/smaps");
    const auto address = reinterpret_cast<std::uintptr_t>(storage);
    bool inside = false;
    std::string line;
    while (std::getline(smaps, line)) {
        std::istringstream fields(line);
        std::string first;
        fields >> first;
        const std::size_t dash = first.find('-');
        if (dash != std::string::npos && first.find(':') == std::string::npos) {
            const std::uintptr_t start = std::stoull(first.substr(0, dash), nullptr, 16);
            const std::uintptr_t end = std::stoull(first.substr(dash + 1), nullptr, 16);
            inside = start <= address && address < end;
        } else if (inside && first == "VmFlags:") {
            std::string flag;
            while (fields >> flag) {
                if (flag == "hg") return true;
            }
            return false;
        }
    }
    return false;
}

}  // namespace kvbench
