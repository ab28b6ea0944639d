// The key tables of every matrix section the reader knows: one row per key.
#pragma once

#include "harness/matrix/key_table.hpp"
#include "harness/matrix/variables.hpp"

#include <vector>

namespace cuparity::matrix_detail {

/// The matrix file's own keys: its sections, type-checked before any is read.
struct document_sections {
  const toml::table *settings = nullptr; ///< [matrix]
  const toml::table *axes = nullptr;
  std::vector<const toml::table *> include, exclude, expect, suite, program, benchmark;
  const toml::table *latency = nullptr;
  const toml::table *packages = nullptr; ///< [packages]
};

[[nodiscard]] const key_table<document_sections> &document_keys();
[[nodiscard]] const key_table<matrix> &matrix_keys();
/// The lowercase keys of [[include]] (its other keys are variables).
[[nodiscard]] const key_table<rule> &include_keys();
[[nodiscard]] const key_table<expectation> &expect_keys();
[[nodiscard]] const key_table<allowance> &allow_keys();
[[nodiscard]] const key_table<latency_settings> &latency_keys();
[[nodiscard]] const key_table<external_suite> &suite_keys();
[[nodiscard]] const key_table<external_suite> &program_keys();

} // namespace cuparity::matrix_detail
