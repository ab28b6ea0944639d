// Both ways to start a child (run_process, child_process) work, a failed start leaks no fd, and
// a cuparity child dies with its parent.
#include "harness/platform/environment.hpp"
#include "harness/platform/parent_death.hpp"
#include "harness/platform/subprocess.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <unistd.h>

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

TEST_CASE("every child learns its parent's pid, whatever its spec says", "[subprocess][orphans]") {
  auto spec = shell("echo \"$CUPARITY_PARENT_PID\"");
  spec.env[parent_pid_variable] = "1"; // a spec cannot name another parent
  const auto r = run_process(spec);
  CHECK(r.out == std::to_string(getpid()) + "\n");
}

namespace {

/// Whether `pid` has ended: gone, or a zombie nobody has reaped yet (a container's pid 1 may
/// never reap what it inherits).
bool ended(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close == std::string::npos || text.compare(close + 1, 3, " Z ") == 0;
}

/// A shell that starts a cuparity cell stuck in cuInit (a 300 s delay fault: far beyond any wait
/// below, so a cell that should have died cannot end by itself in time and pass) as its child,
/// naming itself as the cell's parent as subprocess would, and reports the cell's pid on fd 3.
process_spec shell_with_stuck_cell(const std::string &parent_pid) {
  auto spec = shell("CUPARITY_PARENT_PID=" + parent_pid + " \"$EXE\" cell --case " +
                    "context.current.none & echo $! >&3; exec sleep 30");
  spec.env["EXE"] = CUPARITY_EXE;
  spec.env["NUMBA_CUDA_DRIVER"] = CUPARITY_SIMDRIVER;
  spec.env["CUPARITY_SIM_FAULTS"] = "cuInit:delay_ns=300000000000";
  return spec;
}

/// Whether `pid` has the simulated driver loaded: a cell does so after die_with_parent (cuparity's
/// main arms it first), just before its cuInit.
bool driver_loaded(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(in, line);)
    if (line.find(CUPARITY_SIMDRIVER) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("a cuparity child dies with its parent, and at once if the parent is gone already",
          "[subprocess][orphans]") {
  const auto log = scratch_log("parent_death.log");
  const auto wait_until_ended = [](int pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!ended(pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return ended(pid);
  };
  // How long a cell that must die may take to: start (exec), find its parent gone and kill itself,
  // on a loaded CI machine. Generous, and far below the cell's 300 s in cuInit.
  const auto dies_in = std::chrono::seconds(30);
  SECTION("parent killed: PR_SET_PDEATHSIG ends the child") {
    child_process sh(shell_with_stuck_cell("$$"), log);
    std::string line;
    REQUIRE(sh.read_line(line, std::chrono::seconds(10)) == child_process::read_status::line);
    const int cell = std::stoi(line);
    // Into its cuInit, so past arming PR_SET_PDEATHSIG: what ends it below is the parent's death,
    // not the check for a parent gone already (the next section's).
    for (int i = 0; i < 3000 && !ended(cell) && !driver_loaded(cell); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(driver_loaded(cell));
    REQUIRE_FALSE(ended(cell));
    ::kill(sh.pid(), SIGKILL); // the shell alone: the cell is in its process group
    (void)sh.wait();
    CHECK(wait_until_ended(cell, dies_in));
    if (!ended(cell))
      ::kill(cell, SIGKILL);
  }
  SECTION("named parent gone already: the child kills itself") {
    // As if the parent had died between the spawn and the child's prctl.
    child_process gone(shell("exit 0"), log);
    const int dead = gone.pid();
    (void)gone.wait();
    child_process sh(shell_with_stuck_cell(std::to_string(dead)), log);
    std::string line;
    REQUIRE(sh.read_line(line, std::chrono::seconds(10)) == child_process::read_status::line);
    const int cell = std::stoi(line);
    CHECK(wait_until_ended(cell, dies_in));
    if (!ended(cell))
      ::kill(cell, SIGKILL);
  }
  SECTION("named parent further up (passed through ctest): it runs") {
    child_process sh(shell_with_stuck_cell(std::to_string(getpid())), log);
    std::string line;
    REQUIRE(sh.read_line(line, std::chrono::seconds(10)) == child_process::read_status::line);
    const int cell = std::stoi(line);
    CHECK_FALSE(wait_until_ended(cell, std::chrono::milliseconds(500)));
    sh.kill_group(); // the shell (now sleep) and the cell
    (void)sh.wait();
    CHECK(wait_until_ended(cell, dies_in));
  }
}
