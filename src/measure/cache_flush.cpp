// Makes a step's data cold: clflushopt over its own buffers, or a stream through a buffer several times the LLCs.
#include "kvbench/measure/cache_flush.hpp"

#include "kvbench/measure/environment.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace kvbench {

namespace {

#if defined(__x86_64__)
// CPUID.(EAX=7, ECX=0):EBX bit 23 (Intel SDM vol. 2, CPUID).
bool cpu_has_clflushopt() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (ebx & bit_CLFLUSHOPT) != 0;
}

// The line size clflush and clflushopt act on: CPUID.1:EBX[15:8] × 8 bytes.
std::size_t cpu_flush_line_bytes() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0) {
        const std::size_t line_bytes = ((ebx >> 8) & 0xffu) * 8u;
        if (line_bytes > 0) return line_bytes;
    }
    return CacheFlusher::cache_line_bytes;
}

// Compiled for clflushopt whatever the build's -march, and only called after the CPUID check.
// clflushopt, unlike clflush, is not ordered with the flushes before it, so many are in flight.
__attribute__((target("clflushopt"))) void flush_lines_opt(std::uintptr_t first_line, std::size_t n_lines,
                                                           std::size_t line_bytes) {
    for (std::size_t i = 0; i < n_lines; ++i) {
        _mm_clflushopt(reinterpret_cast<void*>(first_line + i * line_bytes));
    }
}

void flush_lines_legacy(std::uintptr_t first_line, std::size_t n_lines, std::size_t line_bytes) {
    for (std::size_t i = 0; i < n_lines; ++i) {
        _mm_clflush(reinterpret_cast<const void*>(first_line + i * line_bytes));
    }
}
#endif

}  // namespace

std::string_view flush_method_name(FlushMethod method) {
    return method == FlushMethod::clflush ? "clflush" : "stream";
}

bool clflush_supported() {
#if defined(__x86_64__)
    return true;  // clflush is part of SSE2, which every x86-64 CPU has
#else
    return false;
#endif
}

bool clflushopt_supported() {
#if defined(__x86_64__)
    static const bool supported = cpu_has_clflushopt();
    return supported;
#else
    return false;
#endif
}

std::uint64_t evict_regions(std::span<const ByteRegion> regions) {
#if defined(__x86_64__)
    static const std::size_t line_bytes = cpu_flush_line_bytes();
    const bool use_opt = clflushopt_supported();
    std::uint64_t n_flushed = 0;
    // Every thread flushes its share of every region: the instruction's cost is the round
    // trip to the line's home agent, and several cores keep more of them in flight.
#pragma omp parallel reduction(+ : n_flushed)
    {
        const auto n_team = static_cast<std::size_t>(omp_get_num_threads());
        const auto i_thread = static_cast<std::size_t>(omp_get_thread_num());
        for (const ByteRegion& region : regions) {
            if (region.empty()) continue;
            const auto begin = reinterpret_cast<std::uintptr_t>(region.data());
            const std::uintptr_t first_line = begin - begin % line_bytes;
            const std::size_t n_lines = (begin + region.size() - first_line + line_bytes - 1) / line_bytes;
            const std::size_t share_begin = n_lines * i_thread / n_team;
            const std::size_t share_end = n_lines * (i_thread + 1) / n_team;
            const std::uintptr_t share_first = first_line + share_begin * line_bytes;
            if (use_opt) {
                flush_lines_opt(share_first, share_end - share_begin, line_bytes);
            } else {
                flush_lines_legacy(share_first, share_end - share_begin, line_bytes);
            }
            n_flushed += share_end - share_begin;
        }
        // clflushopt is ordered by sfence (Intel SDM vol. 2, CLFLUSHOPT): once it retires,
        // every line above has left every cache, before the timed step begins.
        _mm_sfence();
    }
    return n_flushed;
#else
    static_cast<void>(regions);
    throw std::logic_error("evict_regions: clflush exists only on x86-64; use the stream flush");
#endif
}

std::size_t stream_flush_bytes(std::size_t llc_total_bytes) {
    const std::size_t bytes = CacheFlusher::llc_multiple *
                              (llc_total_bytes == 0 ? CacheFlusher::fallback_llc_bytes : llc_total_bytes);
    // Whole lines, so the stream needs no tail loop.
    return bytes - bytes % CacheFlusher::cache_line_bytes;
}

std::size_t flush_bytes(FlushMethod method, std::size_t llc_total_bytes) {
    return method == FlushMethod::stream ? stream_flush_bytes(llc_total_bytes) : 0;
}

CacheFlusher::CacheFlusher(FlushMethod method, std::size_t llc_total_bytes)
    : method_(method), buffer_bytes_(flush_bytes(method, llc_total_bytes)) {
    if (method == FlushMethod::clflush && !clflush_supported()) {
        throw std::invalid_argument("the clflush cache flush needs an x86-64 CPU; use the stream flush");
    }
    if (buffer_bytes_ == 0) return;
    buffer_ = std::make_unique_for_overwrite<std::uint8_t[]>(buffer_bytes_);
    // First touch: untouched pages all map to the kernel's zero page, which would
    // sit in cache and flush nothing. Writing them in parallel also places each
    // thread's share on its own NUMA node, as stream_buffer() later walks it.
    std::uint8_t* const data = buffer_.get();
    const auto n_bytes = static_cast<std::ptrdiff_t>(buffer_bytes_);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < n_bytes; i += 4096) {
        const auto page_bytes = std::min<std::ptrdiff_t>(4096, n_bytes - i);
        std::memset(data + i, 0, static_cast<std::size_t>(page_bytes));
    }
}

CacheFlusher::CacheFlusher() : CacheFlusher(FlushMethod::stream, collect_environment().llc_total_bytes) {}

void CacheFlusher::flush(std::span<const ByteRegion> regions) {
    if (method_ == FlushMethod::clflush) {
        checksum_ = evict_regions(regions);
    } else {
        stream_buffer();
    }
}

void CacheFlusher::stream_buffer() {
    ++generation_;
    std::uint8_t* const data = buffer_.get();
    const std::uint8_t value = generation_;
    const auto n_lines = static_cast<std::ptrdiff_t>(buffer_bytes_ / cache_line_bytes);
    constexpr auto line = static_cast<std::ptrdiff_t>(cache_line_bytes);
    std::uint64_t sum = 0;
    // Write, then read, with the same static partition so each thread walks its
    // own share (larger than its core's L2). The write also evicts dirty
    // benchmark lines (the KV cache just appended to) now rather than inside the
    // timed step. The read pass, over a buffer at least twice the LLC, evicts the
    // flush's own dirty lines again, so what is left in cache is clean and the
    // timed step pays no write-backs for the flush.
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (std::ptrdiff_t i = 0; i < n_lines; ++i) data[i * line] = value;
#pragma omp for schedule(static) reduction(+ : sum)
        for (std::ptrdiff_t i = 0; i < n_lines; ++i) sum += data[i * line];
    }
    checksum_ = sum;
}

}  // namespace kvbench
