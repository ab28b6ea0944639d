// Older ABIs of an entry with the entry's own C signature (older_abis.inl), callable in its place.
#pragma once

#include "harness/driver/entry.hpp"

#include <optional>
#include <string_view>

namespace cuparity {

/// The cuGetProcAddress version of `symbol` when it is an older ABI of `id` whose C signature is
/// the entry's own (the bare `cuCtxPushCurrent` for the entry that calls `cuCtxPushCurrent_v2`,
/// 2000); nothing for any other symbol.
[[nodiscard]] std::optional<int> older_abi_version(entry_id id, std::string_view symbol) noexcept;

} // namespace cuparity
