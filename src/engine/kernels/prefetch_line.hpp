// prefetch_line(): one software prefetch of a cache line, into L1 or L2, for the kernels that stream.
#pragma once

namespace kvbench {

// Requests the cache line holding p, into L2 (prefetcht1) or into L1 (prefetcht0); a hint the
// compiler drops on a target without prefetches.
inline void prefetch_line(const void* p, bool into_l2) {
    if (into_l2) {
        __builtin_prefetch(p, 0, 2);
    } else {
        __builtin_prefetch(p, 0, 3);
    }
}

}  // namespace kvbench
