// Numeric flags end to end: out-of-bounds values are exit 2 naming the flag, and write nothing.
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace cuparity;
using test::run_cuparity;
namespace fs = std::filesystem;

namespace {

fs::path bounds_dir() {
  auto dir = fs::temp_directory_path() / ("cuparity-cli-bounds-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string small_matrix() {
  const auto path = (bounds_dir() / "small.toml").string();
  std::ofstream(path) << "[matrix]\ncases = [\"binding.*\"]\n[axes]\nA = [\"0\"]\n";
  return path;
}

test::vars sim() {
  return {{var::driver, CUPARITY_SIMDRIVER}};
}

/// Runs `args`; it must exit 2 with `flag` and `what` in stderr, and leave `out` uncreated.
void check_refused(const std::vector<std::string> &args, const std::string &flag,
                   const std::string &what, const fs::path &out) {
  fs::remove_all(out);
  auto res = run_cuparity(args, sim());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 2);
  CHECK_THAT(res.err, Catch::Contains(flag + ": " + what));
  CHECK(res.err.size() < 300); // no 309-digit DBL_MAX
  CHECK_FALSE(fs::exists(out));
}

} // namespace

TEST_CASE("cuparity run: -j is a whole number from 1 to 1024", "[cli][bounds]") {
  const auto out = bounds_dir() / "out";
  for (const char *j : {"0", "-1", "100000", "99999999999999999999"})
    check_refused({"run", small_matrix(), "--no-latency", "--out", out.string(), "-j", j}, "--jobs",
                  "must be from 1 to 1024, not '" + std::string(j) + "'", out);
  for (const char *j : {"1e3", "2.5", "x", ""})
    check_refused({"run", small_matrix(), "--no-latency", "--out", out.string(), "-j", j}, "--jobs",
                  "must be a whole number from 1 to 1024", out);
}

TEST_CASE("cuparity run: --latency-min-time is finite and bounded", "[cli][bounds]") {
  const auto out = bounds_dir() / "out";
  for (const char *t : {"nan", "inf", "-inf", "1e300", "0", "-1", "3601", "0.0001"})
    check_refused({"run", small_matrix(), "--out", out.string(), "--latency-min-time", t},
                  "--latency-min-time", "must be", out);
  check_refused({"run", small_matrix(), "--out", out.string(), "--latency-min-time", "nan"},
                "--latency-min-time",
                "must be a finite number at least 0.001 and at most 3600, not 'nan'", out);
}

TEST_CASE("cuparity ctest: --gpu-count is from 1 to 1024", "[cli][bounds]") {
  const auto out = bounds_dir() / "suite";
  for (const char *g : {"0", "100000", "1e9", "nan"})
    check_refused({"ctest", small_matrix(), "--out", out.string(), "--gpu-count", g}, "--gpu-count",
                  "must be", out);
}

TEST_CASE("cuparity compare: --threshold is a finite fraction", "[cli][bounds]") {
  const auto out = bounds_dir() / "compare.json";
  for (const char *t : {"nan", "inf", "0", "11"})
    check_refused({"compare", "a", "b", "--json", out.string(), "--threshold", t}, "--threshold",
                  "must be", out);
}

TEST_CASE("a binding variable of more digits than long long holds is an integer, nonzero",
          "[cli][bounds]") {
  auto res = run_cuparity({"env", "--json"}, {{var::driver, CUPARITY_SIMDRIVER},
                                              {var::nvidia_backend, CUPARITY_NVIDIA_LIB},
                                              {var::use_nvidia_binding, "99999999999999999999"}});
  INFO(res.out << res.err);
  REQUIRE(res.exit_code == 0);
  auto j = nlohmann::json::parse(res.out);
  CHECK(j["config"]["binding"] == "nvidia");
  CHECK(j["config"]["warnings"].empty());
}
