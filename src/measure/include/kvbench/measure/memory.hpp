// How much memory this machine can give a run right now.
#pragma once

#include <cstdint>
#include <optional>

namespace kvbench {

// /proc/meminfo's MemAvailable: what can be allocated without swapping. Empty where unknown.
std::optional<std::uint64_t> available_memory_bytes();

}  // namespace kvbench
