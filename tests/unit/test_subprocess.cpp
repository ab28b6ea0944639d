// Both ways to start a child (run_process, child_process) work, and a failed start leaks no fd.
#include "harness/platform/environment.hpp"
#include "harness/platform/subprocess.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

/// The descriptors this process has open (the directory's own one included, every time alike).
std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto &e : fs::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

process_spec shell(const std::string &script) {
  process_spec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.timeout = std::chrono::seconds(20);
  return spec;
}

std::string scratch_log(const std::string &name) {
  auto dir = fs::temp_directory_path() / "cuparity-subprocess-tests";
  fs::create_directories(dir);
  auto path = dir / name;
  fs::remove(path);
  return path.string();
}

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("run_process: stdout, stderr, exit code and exact environment", "[subprocess]") {
  const auto before = open_fds();
  auto spec = shell("echo out; echo \"err $ONLY\" >&2; read x || echo no-input; exit 3");
  spec.env["ONLY"] = "this";
  auto r = run_process(spec);
  CHECK(r.exited);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "out\nno-input\n");
  CHECK(r.err == "err this\n");
  CHECK_FALSE(r.timed_out);
  CHECK(open_fds() == before);
}

TEST_CASE("run_process: a timeout kills the child; a missing program throws", "[subprocess]") {
  const auto before = open_fds();
  auto spec = shell("sleep 30");
  spec.timeout = std::chrono::milliseconds(200);
  auto r = run_process(spec);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  process_spec missing;
  missing.argv = {"/nonexistent/program"};
  CHECK_THROWS_AS(run_process(missing), std::system_error);
  CHECK(open_fds() == before);
}

TEST_CASE("child_process: events on fd 3, output to the log, commands on stdin", "[subprocess]") {
  const auto before = open_fds();
  const auto log = scratch_log("child.log");
  {
    child_process child(shell("echo logged; read cmd; echo \"got $cmd\" >&3"), log, true);
    CHECK(child.send_line("ping"));
    std::string line;
    REQUIRE(child.read_line(line, std::chrono::seconds(10)) == child_process::read_status::line);
    CHECK(line == "got ping");
    CHECK(child.read_line(line, std::chrono::seconds(10)) == child_process::read_status::eof);
    auto r = child.wait();
    CHECK(r.exited);
    CHECK(r.exit_code == 0);
  }
  CHECK(read_file(log) == "logged\n");
  {
    // Without commands, stdin is /dev/null.
    child_process child(shell("read x || echo no-input >&3"), log);
    std::string line;
    REQUIRE(child.read_line(line, std::chrono::seconds(10)) == child_process::read_status::line);
    CHECK(line == "no-input");
  }
  CHECK(open_fds() == before);
}

TEST_CASE("child_process: a log that cannot be opened throws and leaks no descriptor",
          "[subprocess]") {
  const std::string log = "/nonexistent-cuparity-dir/cell.log";
  const bool commands = GENERATE(false, true);
  INFO("commands " << commands);
  const auto before = open_fds();
  CHECK_THROWS_AS(child_process(shell("true"), log, commands), std::system_error);
  CHECK(open_fds() == before);
}

TEST_CASE("environment_with sets and removes; cell_changes cleans the matrix's variables",
          "[subprocess]") {
  setenv("CUPARITY_TEST_KEEP", "kept", 1);
  setenv("CUPARITY_TEST_CONTROLLED", "leaked", 1);
  auto env = environment_with({{"CUPARITY_TEST_NEW", "new"}, {"CUPARITY_TEST_KEEP", std::nullopt}});
  CHECK(env.at("CUPARITY_TEST_NEW") == "new");
  CHECK(env.count("CUPARITY_TEST_KEEP") == 0);

  auto changes =
      cell_changes({"CUPARITY_TEST_CONTROLLED", "CUPARITY_TEST_SET"},
                   {{"CUPARITY_TEST_CONTROLLED", std::nullopt}, {"CUPARITY_TEST_SET", "1"}}, "1,0");
  env = environment_with(changes);
  CHECK(env.count("CUPARITY_TEST_CONTROLLED") == 0);
  CHECK(env.at("CUPARITY_TEST_SET") == "1");
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "1,0");
  CHECK(env.at("CUPARITY_TEST_KEEP") == "kept");
  CHECK(cell_changes({}, {}, "").empty());
  unsetenv("CUPARITY_TEST_KEEP");
  unsetenv("CUPARITY_TEST_CONTROLLED");
}
