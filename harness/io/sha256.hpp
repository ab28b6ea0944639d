// SHA-256 (FIPS 180-4) of bytes in memory: the digest of an input a run read (its matrix).
#pragma once

#include <string>
#include <string_view>

namespace cuparity {

/// The SHA-256 of `bytes` as 64 lowercase hex digits.
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

} // namespace cuparity
