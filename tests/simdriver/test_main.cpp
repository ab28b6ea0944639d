// Catch2 main of the simulated driver's tests, plus the shared helpers of test_support.hpp.
#define CATCH_CONFIG_MAIN
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace cuparity::sim::test {

const library &sim() {
  static const library lib = [] {
    // The in-process driver models a host of its own: a CUDA_VISIBLE_DEVICES meant for this
    // machine's GPUs must not hide its devices.
    unsetenv("CUDA_VISIBLE_DEVICES");
    library l(CUPARITY_SIMDRIVER_PATH);
    if (!l.loaded())
      FAIL("dlopen " CUPARITY_SIMDRIVER_PATH ": " << dlerror());
    reinterpret_cast<PFN_cuInit_v2000>(l.get("cuInit"))(0);
    return l;
  }();
  return lib;
}

CUcontext primary() {
  CUcontext ctx = nullptr;
  static const bool retained = [] {
    CUcontext c = nullptr;
    return SIM(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain_v7000)(&c, 0) == CUDA_SUCCESS;
  }();
  REQUIRE(retained);
  REQUIRE(SIM(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain_v7000)(&ctx, 0) == CUDA_SUCCESS);
  // Balance the retain just made: the static one keeps the context alive for the whole run.
  REQUIRE(SIM(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v11000)(0) == CUDA_SUCCESS);
  REQUIRE(SIM(cuCtxSetCurrent, cuCtxSetCurrent_v4000)(ctx) == CUDA_SUCCESS);
  return ctx;
}

CUfunction kernel(const char *name) {
  primary();
  static CUmodule module = [] {
    const std::string ptx =
        ptx_with_entries({"cuparity_empty", "cuparity_spin", "cuparity_write_index",
                          "cuparity_fill_u32", "cuparity_args16"});
    CUmodule m = nullptr;
    REQUIRE(SIM(cuModuleLoadData, cuModuleLoadData_v2000)(&m, ptx.c_str()) == CUDA_SUCCESS);
    return m;
  }();
  CUfunction f = nullptr;
  REQUIRE(SIM(cuModuleGetFunction, cuModuleGetFunction_v2000)(&f, module, name) == CUDA_SUCCESS);
  return f;
}

void spin(CUstream s, double ms, bool ptsz) {
  unsigned long long ns = static_cast<unsigned long long>(ms * 1e6);
  void *args[] = {&ns};
  auto launch = ptsz ? SIM(cuLaunchKernel_ptsz, cuLaunchKernel_v7000_ptsz)
                     : SIM(cuLaunchKernel, cuLaunchKernel_v4000);
  REQUIRE(launch(kernel("cuparity_spin"), 1, 1, 1, 1, 1, 1, 0, s, args, nullptr) == CUDA_SUCCESS);
}

const library &legacy() {
  static const library lib(CUPARITY_SIMDRIVER_LEGACY_PATH);
  return lib;
}

void *proc(const char *base, int version, cuuint64_t flags, CUdriverProcAddressQueryResult *status,
           CUresult *rc) {
  void *pfn = reinterpret_cast<void *>(1);
  CUdriverProcAddressQueryResult st{};
  const CUresult r =
      SIM(cuGetProcAddress_v2, cuGetProcAddress_v12000)(base, &pfn, version, flags, &st);
  if (status != nullptr)
    *status = st;
  if (rc != nullptr)
    *rc = r;
  return pfn;
}

std::string ptx_with_entries(const std::vector<std::string> &entries, const std::string &extra) {
  std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n" + extra;
  for (const auto &e : entries)
    ptx += ".visible .entry " + e + "(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n";
  return ptx;
}

std::string child_result::value(const std::string &key) const {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + "=", 0) == 0)
      return line.substr(key.size() + 1);
  return {};
}

namespace {
std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace

child_result run_child(const std::vector<std::string> &args, const std::vector<std::string> &env) {
  std::vector<std::string> env_strings;
  for (char **e = environ; *e != nullptr; ++e)
    // CUDA_VISIBLE_DEVICES too: one meant for a real GPU of this host would hide simulated devices.
    if (std::strncmp(*e, "CUPARITY_SIM_", 13) != 0 &&
        std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0)
      env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char *> envp;
  for (auto &s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_strings = {CUPARITY_SIMDRIVER_CHILD};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (auto &s : argv_strings)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  char out_path[] = "/tmp/cuparity-sim-child-out.XXXXXX";
  char err_path[] = "/tmp/cuparity-sim-child-err.XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  child_result result;
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd);
  close(err_fd);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  unlink(out_path);
  unlink(err_path);
  return result;
}

} // namespace cuparity::sim::test
