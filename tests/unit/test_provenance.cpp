// What a run records of where it ran: the driver's release (the kernel module's, from /proc or
// NVML; the simulated driver's own), the host's id, the device count, and the matrix's digest.
#include "harness/io/sha256.hpp"
#include "harness/platform/host_id.hpp"
#include "harness/platform/kernel_driver_release.hpp"
#include "harness/run/provenance.hpp"
#include "run_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

/// What `cuparity env --json` says under `env` (the runner's driver check is this command).
nlohmann::json env_document(test::vars env) {
  auto res = test::run_cuparity({"env", "--json"}, std::move(env));
  INFO(res.out << res.err);
  REQUIRE(res.exit_code == 0);
  return nlohmann::json::parse(res.out);
}

bool is_host_id(const std::string &id) {
  return id.empty() || std::regex_match(id, std::regex("[0-9a-f]{12}"));
}

} // namespace

TEST_CASE("the kernel module's release is the word after 'Kernel Module' in /proc's text",
          "[provenance]") {
  const std::pair<const char *, const char *> texts[] = {
      {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sun Jul 13 08:11:42 UTC 2025\n"
       "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
       "580.159.04"},
      {"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  "
       "(dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 03:28:35 UTC 2025\n",
       "570.86.15"},
      {"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  Release Build  "
       "(dvs-builder@U22-I3-AF03-09-1)  Sun Jul 27 06:54:38 UTC 2025\n",
       "580.65.06"},
      {"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:46 UTC 2023",
       "535.104.05"},
      {"GCC version:  gcc version 9.4.0\nNVRM version: NVIDIA UNIX x86_64 Kernel Module\t390.157\t"
       "Wed Oct 12 09:19:07 UTC 2022\n",
       "390.157"},
      // Garbled or cut short: nothing that looks like a release is recorded.
      {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  Sun Jul 13 08:11:42 UTC 2025\n", ""},
      {"NVRM version: NVIDIA UNIX x86_64 Kernel Module", ""},
      {"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64", ""},
      {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580  Sun Jul 13\n", ""},
      {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  5\xff\xfe.159.04  Sun\n", ""},
      {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04;rm -rf /\n", ""},
      {"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n", ""},
      {"", ""},
  };
  for (const auto &[text, release] : texts) {
    INFO(text);
    CHECK(release_from_proc_text(text) == release);
  }
}

TEST_CASE("the /proc file is read where it is a readable regular file, else nothing",
          "[provenance]") {
  const auto dir = test::fresh_dir("cuparity-provenance-tests", "proc");
  const auto good = test::write_file(dir + "/version",
                                     "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  "
                                     "Sun Jul 13 08:11:42 UTC 2025\n");
  const auto r = read_proc_driver_release(good);
  CHECK(r.text == "580.159.04");
  CHECK(r.source == "proc");
  const auto garbled =
      test::write_file(dir + "/garbled", "NVRM version: \x01\x02 Kernel Module ?\n");
  for (const auto &path : {garbled, dir + "/missing", dir}) {
    INFO(path);
    const auto none = read_proc_driver_release(path);
    CHECK(none.text.empty());
    CHECK(none.source.empty());
  }
}

TEST_CASE("the host id is the first 12 hex digits of the first readable machine id",
          "[provenance]") {
  const auto dir = test::fresh_dir("cuparity-provenance-tests", "machine-id");
  const auto id = test::write_file(dir + "/id", "4f1c2e9a7b3d4c5e8f90a1b2c3d4e5f6\n");
  const auto upper = test::write_file(dir + "/upper", "4F1C2E9A7B3D4C5E8F90A1B2C3D4E5F6");
  const auto empty = test::write_file(dir + "/empty", "");
  const auto uninitialized = test::write_file(dir + "/uninitialized", "uninitialized\n");
  const auto short_id = test::write_file(dir + "/short", "4f1c2e9a7b3d\n");
  const auto not_hex = test::write_file(dir + "/not-hex", "4f1c2e9a7b3d4c5e8f90a1b2c3d4e5g6\n");
  const auto missing = dir + "/missing";

  CHECK(read_machine_id({id}) == "4f1c2e9a7b3d4c5e8f90a1b2c3d4e5f6");
  CHECK(read_machine_id({upper}) == "4f1c2e9a7b3d4c5e8f90a1b2c3d4e5f6");
  // /etc/machine-id empty (an image not booted yet): D-Bus's copy answers.
  CHECK(read_machine_id({empty, id}) == "4f1c2e9a7b3d4c5e8f90a1b2c3d4e5f6");
  CHECK(read_machine_id({missing, dir, uninitialized, short_id, not_hex, id}) ==
        "4f1c2e9a7b3d4c5e8f90a1b2c3d4e5f6");
  CHECK(read_machine_id({missing, dir, empty, uninitialized, short_id, not_hex}).empty());
  CHECK(read_machine_id({}).empty());
  const auto mine = read_machine_id(); // this machine's, whatever it has
  CHECK((mine.empty() || mine.size() == 32));
}

TEST_CASE("SHA-256: the FIPS 180-4 examples", "[provenance]") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding's edges (55, 56, 64 bytes), against values from sha256sum.
  CHECK(sha256_hex(std::string(55, 'a')) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256_hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("a simulated driver's release is its own, through the fault shim too", "[provenance]") {
  auto doc = env_document(test::with_sim_driver());
  CHECK(doc["driver_release"] == "sim-1.0-13000");
  CHECK(doc["driver_release_source"] == "simulated");
  doc = env_document(test::with_sim_driver({{"CUPARITY_SIM_DRIVER_VERSION", "12080"}}));
  CHECK(doc["driver_release"] == "sim-1.0-12080");
  doc = env_document(test::with_sim_driver({{var::driver, CUPARITY_SIMDRIVER_LEGACY}}));
  CHECK(doc["driver_release"] == "sim-1.0-legacy-11000");
  doc = env_document({{var::driver, std::string(CUPARITY_BIN_DIR) + "/libcuparity_fault_shim.so"},
                      {"CUPARITY_SHIM_TARGET", CUPARITY_SIMDRIVER}});
  CHECK(doc["config"]["simulated"] == true);
  CHECK(doc["driver_release"] == "sim-1.0-13000");
  CHECK(doc["driver_release_source"] == "simulated");

  const auto p = make_provenance(env_document(test::with_sim_driver()), {"cuparity", "run"});
  CHECK(p["simulated"] == true);
  CHECK(p["driver_release"] == "sim-1.0-13000");
  CHECK(p["driver_release_source"] == "simulated");
  CHECK(p["gpu_count"] == 1);
  CHECK(p["gpu_count"] == p["devices"].size());
  // A keyed hash of the machine id, never the id itself (machine-id(5)).
  const auto machine = read_machine_id();
  CHECK(
      p["host_id"] ==
      (machine.empty() ? std::string() : sha256_hex("cuparity host id:" + machine).substr(0, 12)));
  CHECK(p["host_id"] == host_id());
  CHECK((machine.empty() || machine.find(p["host_id"].get<std::string>()) == std::string::npos));
  CHECK(is_host_id(p["host_id"]));
}

TEST_CASE("provenance from a driver check without a release or devices: empty, 0", "[provenance]") {
  const auto p = make_provenance(
      {{"config", {{"simulated", false}}}, {"driver", nlohmann::json::object()}}, {"cuparity"});
  CHECK(p["driver_release"] == "");
  CHECK(p["driver_release_source"] == "");
  CHECK(p["gpu_count"] == 0);
  CHECK(p.contains("host"));
}

TEST_CASE("a simulated run records its release, host id, device count and the matrix's digest",
          "[provenance][runner]") {
  const auto dir = test::fresh_dir("cuparity-provenance-tests", "run");
  const std::string text =
      "# one cell, one case\n[matrix]\ncases = [\"binding.config.effective\"]\n"
      "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"0\"]\n";
  const auto m = test::write_file(dir + "/m.toml", text);
  auto res = test::run_cuparity({"run", m, "--out", dir + "/out", "--no-latency"},
                                test::with_sim_driver({{"CUPARITY_SIM_DEVICES", "2"}}));
  INFO(res.out << res.err);
  REQUIRE(res.exit_code == 0);
  const auto s = test::read_summary_json(dir + "/out");
  const auto &p = s["provenance"];
  CHECK(p["simulated"] == true);
  CHECK(p["driver_release"] == "sim-1.0-13000");
  CHECK(p["driver_release_source"] == "simulated");
  CHECK(p["gpu_count"] == 2);
  CHECK(p["devices"].size() == 2);
  CHECK(is_host_id(p["host_id"]));
  CHECK(s["matrix"]["digest"] == "sha256:" + sha256_hex(text));
}
