// PageAlignedVector: a std::vector whose storage starts on a page boundary, and whose large
// buffers (the KV cache, the weights, the roofline's stream) are advised into huge pages.
#pragma once

#include <cstddef>
#include <vector>

namespace kvbench {

// Buffers of at least this many bytes start on a 2 MiB boundary and are advised into
// transparent huge pages (docs/measuring.md, "Huge pages").
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

// Storage for `bytes` bytes: 4 KiB-aligned below huge_page_bytes, else 2 MiB-aligned and, on
// Linux, madvise(MADV_HUGEPAGE)'d. Throws std::bad_alloc as operator new does.
void* allocate_page_aligned(std::size_t bytes);
// Frees what allocate_page_aligned(bytes) returned, given the same byte count.
void free_page_aligned(void* storage, std::size_t bytes) noexcept;

// Whether the kernel accepted the huge-page advice for a buffer from allocate_page_aligned.
// False for small buffers, off Linux, and where the kernel has no transparent huge pages.
bool huge_pages_advised(const void* storage, std::size_t bytes);

// Streams that start mid-page cost the hardware prefetcher a page crossing inside every
// row; a weight or cache that started mid-page made the B=8, D=4096 step measurably slower
// (the first figures of docs/performance.md#amd-epyc-zen-5-kvm-guest). Also keeps results
// independent of where malloc puts a buffer, since every kernel then sees the same
// alignment. Huge pages: a streaming step otherwise walks the page table every 4 KiB, which
// made cold attention measurably slower (docs/measuring.md#huge-pages,
// bench/journal/2026-12-02-huge-pages.md).
template <typename T>
struct PageAlignedAllocator {
    using value_type = T;

    PageAlignedAllocator() = default;
    template <typename U>
    PageAlignedAllocator(const PageAlignedAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) { return static_cast<T*>(allocate_page_aligned(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { free_page_aligned(p, n * sizeof(T)); }

    template <typename U>
    bool operator==(const PageAlignedAllocator<U>&) const noexcept {
        return true;
    }
};

template <typename T>
using PageAlignedVector = std::vector<T, PageAlignedAllocator<T>>;

}  // namespace kvbench
