// Reading the binding variables: defaults, garbage, "0", NUMBA_CUDA_DRIVER validation; where
// companion libraries are found.
#include "harness/config/config.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <initializer_list>

using namespace cuparity;
using test::lookup;

TEST_CASE("defaults when nothing is set", "[config]") {
  auto s = read_settings(lookup({}), "/opt/cuparity/bin");
  CHECK_FALSE(s.use_nvidia_binding);
  CHECK_FALSE(s.numba_ptds);
  CHECK_FALSE(s.cuda_python_ptds);
  CHECK(s.driver_path.empty());
  CHECK(s.include_path == "/usr/local/cuda/include");
  CHECK(s.nvidia_backend_path == "/opt/cuparity/bin/libcuparity_nvidia.so");
  CHECK(s.warnings.empty());
  CHECK(s.variables.empty());
}

TEST_CASE("'0' is off for every switch, including CUDA_PYTHON's (cuda-python#2076)", "[config]") {
  auto s = read_settings(
      lookup(
          {{var::use_nvidia_binding, "0"}, {var::numba_ptds, "0"}, {var::cuda_python_ptds, "0"}}),
      ".");
  CHECK_FALSE(s.use_nvidia_binding);
  CHECK_FALSE(s.numba_ptds);
  CHECK_FALSE(s.cuda_python_ptds);
  CHECK(s.warnings.empty());
  CHECK(s.variables.size() == 3);
}

TEST_CASE("any non-zero integer is on", "[config]") {
  auto s =
      read_settings(lookup({{var::use_nvidia_binding, "2"}, {var::cuda_python_ptds, " 1"}}), ".");
  CHECK(s.use_nvidia_binding);
  CHECK(s.cuda_python_ptds);
}

TEST_CASE("garbage warns, naming variable and value, and the default is used", "[config]") {
  auto s = read_settings(lookup({{var::use_nvidia_binding, "yes"},
                                 {var::numba_ptds, "on"},
                                 {var::cuda_python_ptds, "abc"}}),
                         ".");
  CHECK_FALSE(s.use_nvidia_binding);
  CHECK_FALSE(s.numba_ptds);
  CHECK_FALSE(s.cuda_python_ptds);
  REQUIRE(s.warnings.size() == 3);
  CHECK_THAT(s.warnings[0], Catch::Contains("NUMBA_CUDA_USE_NVIDIA_BINDING='yes'"));
  CHECK_THAT(s.warnings[1], Catch::Contains("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM='on'"));
  CHECK_THAT(s.warnings[2], Catch::Contains("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM='abc'"));
}

TEST_CASE("NUMBA_CUDA_DRIVER must name a file", "[config]") {
  SECTION("a missing path") {
    CHECK_THROWS_WITH(read_settings(lookup({{var::driver, "/nonexistent/libcuda.so.1"}}), "."),
                      Catch::Contains("NUMBA_CUDA_DRIVER='/nonexistent/libcuda.so.1'") &&
                          Catch::Contains("not a valid file path"));
  }
  SECTION("a directory (Numba's docs wrongly call it one)") {
    CHECK_THROWS_AS(read_settings(lookup({{var::driver, "/tmp"}}), "."), config_error);
  }
  SECTION("empty") {
    CHECK_THROWS_AS(read_settings(lookup({{var::driver, ""}}), "."), config_error);
  }
  SECTION("'0' disables the driver, as in Numba") {
    CHECK_THROWS_WITH(read_settings(lookup({{var::driver, "0"}}), "."),
                      Catch::Contains("NUMBA_CUDA_DRIVER=0"));
  }
  SECTION("a relative file becomes absolute") {
    auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(std::filesystem::path(CUPARITY_SIMDRIVER).parent_path());
    auto s = read_settings(lookup({{var::driver, "libcuparity_simdriver.so"}}), ".");
    std::filesystem::current_path(cwd);
    CHECK(s.driver_path == CUPARITY_SIMDRIVER);
  }
}

TEST_CASE("include path and nvidia backend path come from their variables", "[config]") {
  auto s = read_settings(
      lookup({{var::include_path, "/x/include"}, {var::nvidia_backend, "/y.so"}}), ".");
  CHECK(s.include_path == "/x/include");
  CHECK(s.nvidia_backend_path == "/y.so");
}

namespace {

/// A fresh folder holding the named (empty) files, under the system's temporary folder.
std::filesystem::path companion_tree(const std::string &name,
                                     std::initializer_list<std::string> files) {
  auto root = std::filesystem::temp_directory_path() / "cuparity-companions" / name;
  std::filesystem::remove_all(root);
  for (const auto &f : files) {
    std::filesystem::create_directories((root / f).parent_path());
    std::ofstream(root / f) << "";
  }
  return root;
}

} // namespace

TEST_CASE("a companion library: beside the executable, then ../lib/cuparity", "[config]") {
  auto both = companion_tree("both", {"bin/libx.so", "lib/cuparity/libx.so"});
  CHECK(companion_library((both / "bin").string(), "libx.so") == (both / "bin/libx.so").string());
  auto installed = companion_tree("installed", {"bin/.keep", "lib/cuparity/libx.so"});
  CHECK(companion_library((installed / "bin").string(), "libx.so") ==
        (installed / "lib/cuparity/libx.so").string());
  // Found nowhere: the path beside the executable, which the error then names.
  CHECK(companion_library((installed / "bin").string(), "liby.so") ==
        (installed / "bin/liby.so").string());
}

TEST_CASE("a user's executable finds the installed prefix's libraries through a registered "
          "folder, after the two beside it",
          "[config]") {
  auto prefix = companion_tree("prefix", {"lib/cuparity/libcuparity_registered_only.so",
                                          "lib/cuparity/libcuparity_registered_both.so"});
  auto user = companion_tree("user-build", {"libcuparity_registered_both.so"});
  CHECK(companion_library(user.string(), "libcuparity_registered_only.so") ==
        (user / "libcuparity_registered_only.so").string());
  add_companion_folder((prefix / "lib/cuparity").string());
  CHECK(companion_library(user.string(), "libcuparity_registered_only.so") ==
        (prefix / "lib/cuparity/libcuparity_registered_only.so").string());
  CHECK(companion_library(user.string(), "libcuparity_registered_both.so") ==
        (user / "libcuparity_registered_both.so").string());
}
