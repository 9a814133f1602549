// BlockPrefetcher: software prefetch of a later key block, spread between the current block's loads.
// Private to src/engine/kernels (attention_kernel.cpp).
#pragma once

#include "attention_types.hpp"
#include "paged_rows.hpp"
#include "prefetch_plan.hpp"
#include "simd.hpp"
#include "tuning.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace kvbench::simd {

// Keys and values of a later block, requested a few cache lines at a time between the
// current block's loads. The kernel reads a block in bursts separated by arithmetic, so the
// hardware prefetcher, which follows demand, falls behind; and a burst of software
// prefetches overflows the miss buffers and is mostly dropped
// (bench/journal/2026-11-30-block-prefetch-a-few-lines-at-a-time.md). How far ahead, and into
// L1 or L2: prefetch_plan.hpp.
class BlockPrefetcher {
public:
    explicit BlockPrefetcher(PrefetchPlan plan) : plan_(plan) {}

    // Blocks ahead of the one being computed.
    std::size_t blocks_ahead() const { return plan_.blocks_ahead; }

    // Spreads the lines of the block of block_keys keys at first_key (none past the context)
    // over `calls` calls.
    void start(const GroupAttention& problem, std::size_t first_key, std::size_t block_keys, std::size_t calls) {
        calls_ = 0;
        per_call_ = 0;
        n_segments_ = 0;
        total_lines_ = 0;
        next_turn_ = nullptr;
        if (first_key >= problem.n_ctx) return;
        const std::size_t n_keys = std::min(block_keys, problem.n_ctx - first_key);
        // Keys and values of different types walk the wider rows' lines: the narrower side's
        // extra lines are its next block's, requested a little early.
        const std::size_t row_bytes = std::max(kv_row_bytes(problem.kv_dtype, problem.kv_stride),
                                               kv_row_bytes(problem.value_dtype, problem.kv_stride));
        line_ = address(problem.keys) + first_key * kv_row_bytes(problem.kv_dtype, problem.kv_stride);
        value_offset_ = address(problem.values) + first_key * kv_row_bytes(problem.value_dtype, problem.kv_stride) - line_;
        // An int8 block's scales, two or three lines each: requested with the block's first line.
        if (problem.key_scales != nullptr) prefetch_scales(problem.key_scales + first_key, n_keys);
        if (problem.value_scales != nullptr) prefetch_scales(problem.value_scales + first_key, n_keys);
        // Contiguous rows (the KV cache) make one segment; strided rows one segment each.
        const bool contiguous = problem.kv_stride == problem.head_dim;
        const std::size_t used_bytes = std::max(kv_row_bytes(problem.kv_dtype, problem.head_dim),
                                                kv_row_bytes(problem.value_dtype, problem.head_dim));
        plan_segments(contiguous ? 1 : n_keys, contiguous ? n_keys * row_bytes : used_bytes, row_bytes, calls);
    }

    // A run of keys inside one cache block, or a part of one: its lines from `line` to `end`,
    // and the values' as far from the keys' (mod 2^64).
    struct Piece {
        std::uintptr_t line;
        std::uintptr_t end;
        std::uintptr_t value_offset;
    };
    // At most this many pieces at once; a block over more runs (cache blocks of a few positions)
    // has the further ones' lines not requested.
    static constexpr std::size_t max_pieces = 16;
    using Pieces = std::array<Piece, max_pieces>;
    // A piece's lines for one turn. No member initializers: every attention call holds a
    // PagedTurns, and 256 initialized turns would be 6 KiB zeroed per call, paged or not.
    struct Turn {
        std::uintptr_t line;
        std::uintptr_t end;
        std::uintptr_t value_offset;
    };
    // A block that needs more turns has its further lines not requested.
    static constexpr std::size_t max_turns = 256;
    // A paged block's pieces and its turns in order: start_paged()'s, in the caller's storage,
    // which must outlive the block's calls. The turns are laid out when the block starts, so
    // that issue() only steps a pointer through them: state for the turns in the prefetcher, or a
    // call in issue() to change turns, cost the contiguous steps that share issue() 10-27 %
    // (int8, q8_0, e4m3) or 18 % (MQA's 8-row tiles), since the tiles' local copy of the prefetcher
    // then leaves its registers (bench/journal/2026-12-04-paged-turns-out-of-the-prefetcher.md).
    struct PagedTurns {
        Pieces pieces;
        std::array<Turn, max_turns> turns;
    };

    // Kernel blocks whose lines start_paged() requests side by side, for cache blocks of
    // block_positions and kernel blocks of block_keys: the plan's paged_parts where it gives
    // them, up to tuning's wide_paged_max_pieces cache blocks; else as many as make tuning's
    // paged_pieces cache blocks, or the next kernel block alone where a cache block holds several.
    static std::size_t paged_parts(std::size_t block_positions, std::size_t block_keys, std::size_t plan_parts) {
        if (block_positions == 0) return 1;
        const std::size_t runs =
            block_positions >= block_keys ? 1 : (block_keys + block_positions - 1) / block_positions;
        if (plan_parts != 0) {
            return std::max<std::size_t>(1, std::min(plan_parts, tuning.prefetch.wide_paged_max_pieces / runs));
        }
        if (block_positions > block_keys) return 1;
        return std::max<std::size_t>(1, tuning.prefetch.paged_pieces / runs);
    }

    // The pieces start_paged() requests for the kernel blocks of block_keys from first_key on
    // (paged_rows.hpp's paged_run cuts them into runs): with parts = paged_parts(), the block
    // at first_key + a·block_keys gets part parts - 1 - a of each of its runs' lines, for
    // a < parts; so over the blocks, every line once, its last part one block ahead. Returns how
    // many pieces; none past the context.
    static std::size_t paged_pieces(const GroupAttention& problem, std::size_t first_key, std::size_t block_keys,
                                    std::size_t plan_parts, Pieces& pieces) {
        const std::size_t parts = paged_parts(problem.block_positions, block_keys, plan_parts);
        const std::size_t key_row_bytes = kv_row_bytes(problem.kv_dtype, problem.kv_stride);
        const std::size_t value_row_bytes = kv_row_bytes(problem.value_dtype, problem.kv_stride);
        const std::size_t row_bytes = std::max(key_row_bytes, value_row_bytes);
        std::size_t n_pieces = 0;
        for (std::size_t ahead = 0; ahead < parts; ++ahead) {
            const std::size_t part = parts - 1 - ahead;
            const std::size_t block_first = first_key + ahead * block_keys;
            for (std::size_t seen = 0; seen < block_keys && n_pieces < max_pieces;) {
                if (block_first + seen >= problem.n_ctx) break;
                const PagedRun run = paged_run(problem, block_first + seen, block_keys - seen);
                seen += run.n_keys;
                const std::uintptr_t keys = address(problem.keys) + run.row * key_row_bytes;
                const std::uintptr_t values = address(problem.values) + run.row * value_row_bytes;
                const std::uintptr_t first_line = keys / line_bytes * line_bytes;
                const std::size_t n_lines = (keys + run.n_keys * row_bytes - first_line + line_bytes - 1) / line_bytes;
                const std::uintptr_t begin = first_line + share(part, n_lines, parts) * line_bytes;
                const std::uintptr_t end = first_line + share(part + 1, n_lines, parts) * line_bytes;
                if (begin != end) pieces[n_pieces++] = {begin, end, values - keys};
            }
        }
        return n_pieces;
    }

    // A paged cache: paged_pieces()'s lines, the pieces taking turns tuning's paged_turn_lines at a
    // time, so that the lines of several cache blocks are in flight at once: this host serves
    // pieces at random places faster several at once than one after another
    // (bench/journal/2026-12-04-paged-streams.md). A turn of one line cost more bookkeeping than
    // it saved; a single piece is requested as start() requests a block.
    void start_paged(const GroupAttention& problem, std::size_t first_key, std::size_t block_keys, std::size_t calls,
                     PagedTurns& turns) {
        calls_ = 0;
        per_call_ = 0;
        n_segments_ = 0;
        total_lines_ = 0;
        const std::size_t n_pieces =
            paged_pieces(problem, first_key, block_keys, plan_.paged_parts, turns.pieces);
        if (n_pieces == 0) return;
        // An int8 block's scales, a few lines a run: requested with the block's last part.
        if (problem.key_scales != nullptr || problem.value_scales != nullptr) {
            for (std::size_t seen = 0; seen < block_keys && first_key + seen < problem.n_ctx;) {
                const PagedRun run = paged_run(problem, first_key + seen, block_keys - seen);
                seen += run.n_keys;
                if (problem.key_scales != nullptr) prefetch_scales(problem.key_scales + run.row, run.n_keys);
                if (problem.value_scales != nullptr) prefetch_scales(problem.value_scales + run.row, run.n_keys);
            }
        }
        const std::size_t n_turns = lay_out_turns(turns, n_pieces);
        for (std::size_t i = 0; i < n_turns; ++i) total_lines_ += (turns.turns[i].end - turns.turns[i].line) / line_bytes;
        calls = std::max<std::size_t>(1, calls);
        per_call_ = (total_lines_ + calls - 1) / calls;
        calls_per_turn_ = calls;
        credit_ = 0;
        credit_per_call_ = calls;  // every call is a turn
        n_segments_ = n_turns;
        line_ = turns.turns[0].line;
        segment_end_ = turns.turns[0].end;
        value_offset_ = turns.turns[0].value_offset;
        next_turn_ = turns.turns.data() + 1;
    }

private:
    // From line_ on: n_segments of segment_bytes each, stride_bytes apart, over `calls` calls.
    void plan_segments(std::size_t n_segments, std::size_t segment_bytes, std::size_t stride_bytes,
                       std::size_t calls) {
        n_segments_ = n_segments;
        segment_lines_bytes_ = (segment_bytes + line_bytes - 1) / line_bytes * line_bytes;
        stride_bytes_ = stride_bytes;
        segment_start_ = line_;
        segment_end_ = line_ + segment_lines_bytes_;
        const std::size_t n_lines = n_segments_ * (segment_lines_bytes_ / line_bytes);
        total_lines_ = n_lines;
        calls = std::max<std::size_t>(1, calls);
        calls_per_turn_ = calls;
        credit_ = 0;
        if (n_lines >= calls || !plan_.spread) {
            per_call_ = (n_lines + calls - 1) / calls;
            credit_per_call_ = calls;  // every call is a turn
        } else {
            // Fewer lines than calls, and a plan that spreads them (prefetch_plan.hpp): one line
            // on n_lines of the calls, evenly apart. Requested on the first calls, the lines of
            // a GQA group's next block would all go out in its score tiles, faster than DRAM
            // delivers: the miss buffers fill, the prefetches stall the FMAs, and the output
            // tiles then run with nothing in flight
            // (bench/journal/2026-12-02-next-block-lines-spread.md).
            per_call_ = 1;
            credit_per_call_ = n_lines;
        }
    }

public:
    // Called between the kernel's loads, as often as every 8 FMAs on AVX2: the bookkeeping is a
    // credit, a pointer and its end, kept in registers, since a call costing more than its
    // prefetches weighs on the whole kernel (bench/journal/2026-12-01-issue-13-on-zen-3.md).
    // may_spread false (tile_may_spread: a tile whose calls are never spread) leaves out the
    // credit's test, which costs time with nothing spread (prefetch_plan.hpp).
    template <bool may_spread = true>
    void issue() {
        ++calls_;
        if constexpr (may_spread) {
            credit_ += credit_per_call_;
            if (credit_ < calls_per_turn_) return;
            credit_ -= calls_per_turn_;
        }
        for (std::size_t i = 0; i < per_call_; ++i) {
            if (line_ == segment_end_) {
                if (--n_segments_ == 0) {
                    per_call_ = 0;  // every line requested: later calls only count
                    return;
                }
                if (next_turn_ != nullptr) {
                    // A paged block's turns are segments laid out in start_paged().
                    line_ = next_turn_->line;
                    segment_end_ = next_turn_->end;
                    value_offset_ = next_turn_->value_offset;
                    ++next_turn_;
                } else {
                    segment_start_ += stride_bytes_;
                    line_ = segment_start_;
                    segment_end_ = line_ + segment_lines_bytes_;
                }
            }
            // The same line of the keys and of the values.
            prefetch_line(reinterpret_cast<const char*>(line_), plan_.into_l2);
            prefetch_line(reinterpret_cast<const char*>(line_ + value_offset_), plan_.into_l2);
            line_ += line_bytes;
        }
    }

    // Takes over what issue() moved on in `moved`, a copy of this prefetcher that a tile kept in
    // registers: field by field, as issue() changes them. `*this = moved` had GCC rebuild the
    // copy on the stack with 8-byte and 1-byte stores and read it back in 64-byte loads, which
    // cannot be forwarded from those stores and wait for them to reach the cache: on Zen 5 that
    // wait held a third of the time of int8's one-row score tiles
    // (bench/journal/2026-12-06-prefetcher-written-back-field-by-field.md).
    void take_progress(const BlockPrefetcher& moved) {
        calls_ = moved.calls_;
        credit_ = moved.credit_;
        per_call_ = moved.per_call_;
        n_segments_ = moved.n_segments_;
        line_ = moved.line_;
        segment_start_ = moved.segment_start_;
        segment_end_ = moved.segment_end_;
        value_offset_ = moved.value_offset_;
        next_turn_ = moved.next_turn_;
    }

    // The lines that hold n scales from `scales` on (n > 0): from the first's line to past the last's.
    struct ScaleLines {
        std::uintptr_t first;
        std::uintptr_t end;
    };
    static ScaleLines scale_lines(const float* scales, std::size_t n) {
        const std::uintptr_t first = address(scales) / line_bytes * line_bytes;
        const std::uintptr_t last = (address(scales + n) - 1) / line_bytes * line_bytes;
        return {first, last + line_bytes};
    }

    // Calls since start(): how many the next block will make, as blocks are alike.
    std::size_t calls() const { return calls_; }

    // The next line of the keys to request, and of the values: for the tests.
    std::uintptr_t next_line() const { return line_; }
    std::uintptr_t next_value_line() const { return line_ + value_offset_; }

    // Lines of the keys requested since start() (and as many of the values): for the tests.
    std::size_t lines_requested() const {
        if (n_segments_ == 0) return total_lines_;
        if (next_turn_ != nullptr) {
            std::size_t lines_left = (segment_end_ - line_) / line_bytes;
            for (std::size_t i = 1; i < n_segments_; ++i) lines_left += (next_turn_[i - 1].end - next_turn_[i - 1].line) / line_bytes;
            return total_lines_ - lines_left;
        }
        const std::size_t lines_left =
            (n_segments_ - 1) * (segment_lines_bytes_ / line_bytes) + (segment_end_ - line_) / line_bytes;
        return total_lines_ - lines_left;
    }

private:
    static constexpr std::size_t line_bytes = 64;

    // The pieces' lines in turns of tuning's paged_turn_lines, piece after piece and round again
    // (a piece whose lines are all out gives its place to the last one); one piece in one turn.
    // Returns how many turns. The pieces stay as they are: each one's next line and the order of
    // those with lines left are kept apart, since moving a whole piece into a place just written
    // field by field stalled the load on its stores, the most costly line of a paged block's
    // bookkeeping (bench/journal/2026-12-06-paged-bookkeeping-and-int8-scales.md).
    static std::size_t lay_out_turns(PagedTurns& turns, std::size_t n_pieces) {
        const Piece* pieces = turns.pieces.data();
        const std::uintptr_t turn_bytes =
            n_pieces == 1 ? pieces[0].end - pieces[0].line : tuning.prefetch.paged_turn_lines * line_bytes;
        std::array<std::uintptr_t, max_pieces> next_line;
        std::array<std::size_t, max_pieces> waiting;  // pieces with lines left, in the order of their turns
        for (std::size_t i = 0; i < n_pieces; ++i) {
            next_line[i] = pieces[i].line;
            waiting[i] = i;
        }
        std::size_t n_turns = 0;
        for (std::size_t at = 0; n_pieces > 0 && n_turns < max_turns;) {
            const std::size_t piece = waiting[at];
            const std::uintptr_t end = std::min(pieces[piece].end, next_line[piece] + turn_bytes);
            turns.turns[n_turns++] = {next_line[piece], end, pieces[piece].value_offset};
            next_line[piece] = end;
            if (end == pieces[piece].end) {
                waiting[at] = waiting[--n_pieces];
                if (at == n_pieces) at = 0;
            } else if (++at == n_pieces) {
                at = 0;
            }
        }
        return n_turns;
    }

    // Every line of n scales from `scales` on, into L1. One line, 16 scales, had been requested
    // for a block of 32 keys: on a paged int8 cache, whose scales no hardware prefetcher follows,
    // the load of the second line then held two thirds of the time of the tile that applies
    // them (bench/journal/2026-12-06-paged-bookkeeping-and-int8-scales.md).
    static void prefetch_scales(const float* scales, std::size_t n) {
        const ScaleLines lines = scale_lines(scales, n);
        for (std::uintptr_t line = lines.first; line != lines.end; line += line_bytes) {
            __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 3);
        }
    }

    // part · n_lines / parts, with parts known to the compiler where it is a build's: a division by
    // a variable for every piece weighed on a paged step (paged_rows.hpp's paged_run).
    static std::size_t share(std::size_t part, std::size_t n_lines, std::size_t parts) {
        const std::size_t lines = part * n_lines;
        switch (parts) {
        case 1: return lines;
        case 2: return lines / 2;
        case 3: return lines / 3;
        case 4: return lines / 4;
        default: return lines / parts;
        }
    }

    // Addresses as integers: the values' line is the keys' plus an offset between two buffers.
    static std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

    PrefetchPlan plan_;
    std::uintptr_t line_ = 0;           // next line of the keys to request
    std::uintptr_t value_offset_ = 0;   // values' address minus keys' address (mod 2^64)
    std::uintptr_t segment_start_ = 0;  // first line of the current segment of the keys
    std::uintptr_t segment_end_ = 0;    // past its last line
    std::size_t segment_lines_bytes_ = 0;
    std::size_t stride_bytes_ = 0;
    std::size_t n_segments_ = 0;        // segments left, the current one included
    std::size_t total_lines_ = 0;       // of the keys in the block
    std::size_t per_call_ = 0;          // lines of K (and as many of V) per turn; 0 when done
    // A call is a turn to request lines when the credit, growing by credit_per_call_ a call,
    // reaches calls_per_turn_ (Bresenham's rule: n_lines turns in the block's calls).
    std::size_t credit_ = 0;
    std::size_t credit_per_call_ = 0;
    std::size_t calls_per_turn_ = 1;
    std::size_t calls_ = 0;
    const Turn* next_turn_ = nullptr;  // a paged block's next turn (start_paged); none for start()
};

}  // namespace kvbench::simd
