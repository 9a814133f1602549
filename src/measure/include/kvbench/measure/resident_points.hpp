// ResidentPoints: the points an interleaved run keeps built between its rounds, within a byte
// budget, the least recently used released first (docs/measuring.md#interleaving).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>

namespace kvbench {

template <typename State>
class ResidentPoints {
public:
    explicit ResidentPoints(std::uint64_t budget_bytes) : budget_bytes_(budget_bytes) {}

    // The point's state if it is resident (and now the most recently used), else nullptr.
    State* find(std::size_t point) {
        const auto found = states_.find(point);
        if (found == states_.end()) return nullptr;
        order_.remove(point);
        order_.push_back(point);
        return found->second.state.get();
    }

    // Releases the least recently used points until `bytes` more fit the budget, or none is left:
    // one point larger than the budget is still kept, alone.
    void make_room(std::uint64_t bytes) {
        while (!order_.empty() && resident_bytes_ + bytes > budget_bytes_) release(order_.front());
    }

    // Requires: `point` not resident.
    State& insert(std::size_t point, std::unique_ptr<State> state, std::uint64_t bytes) {
        resident_bytes_ += bytes;
        order_.push_back(point);
        return *states_.emplace(point, Entry{std::move(state), bytes}).first->second.state;
    }

    void release(std::size_t point) {
        const auto found = states_.find(point);
        if (found == states_.end()) return;
        resident_bytes_ -= found->second.bytes;
        states_.erase(found);
        order_.remove(point);
    }

    std::uint64_t resident_bytes() const { return resident_bytes_; }
    std::size_t size() const { return states_.size(); }

private:
    struct Entry {
        std::unique_ptr<State> state;
        std::uint64_t bytes;
    };
    std::uint64_t budget_bytes_;
    std::uint64_t resident_bytes_ = 0;
    std::map<std::size_t, Entry> states_;
    std::list<std::size_t> order_;  // resident points, least recently used first
};

}  // namespace kvbench
