// PageAlignedVector's storage: page-aligned, large buffers on 2 MiB boundaries and advised into huge pages.
#include "kvbench/engine/page_aligned.hpp"
#include "kvbench/measure/environment.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>

namespace {

std::uintptr_t address_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

TEST_CASE("small buffers start on a 4 KiB page and are not advised into huge pages") {
    kvbench::PageAlignedVector<float> small(1000);
    CHECK(address_of(small.data()) % 4096 == 0);
    CHECK_FALSE(kvbench::huge_pages_advised(small.data(), small.size() * sizeof(float)));
}

TEST_CASE("large buffers start on a 2 MiB boundary, hold their values, and carry the huge-page advice") {
    const std::size_t n_floats = 3 * kvbench::huge_page_bytes / sizeof(float) + 5;  // not a whole number of huge pages
    kvbench::PageAlignedVector<float> large(n_floats);
    CHECK(address_of(large.data()) % kvbench::huge_page_bytes == 0);
    std::iota(large.begin(), large.end(), 0.0f);
    CHECK(large[n_floats - 1] == static_cast<float>(n_floats - 1));
#if defined(__linux__)
    // The advice is refused only by a kernel built without transparent huge pages, which has
    // no /sys/kernel/mm/transparent_hugepage/enabled; under "never" it is recorded all the same.
    if (!kvbench::collect_environment().transparent_hugepage.empty()) {
        CHECK(kvbench::huge_pages_advised(large.data(), n_floats * sizeof(float)));
    }
#endif
}
