// Helpers for tests that run `cuparity` end to end on the simulated driver.
#pragma once

#include "harness/config/env_vars.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace cuparity::test {

/// A fresh scratch directory `name` under the system's temporary folder and `group`.
inline std::string fresh_dir(const std::string &group, const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() / group / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string write_file(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
  return path;
}

/// `v` with the simulated driver as NUMBA_CUDA_DRIVER unless it names another.
inline vars with_sim_driver(vars v = {}) {
  v.try_emplace(var::driver, CUPARITY_SIMDRIVER);
  return v;
}

inline nlohmann::json read_summary_json(const std::string &dir) {
  std::ifstream in(dir + "/summary.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

inline std::string read_text(const std::string &path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace cuparity::test
