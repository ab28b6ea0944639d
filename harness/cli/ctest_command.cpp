// `cuparity ctest MATRIX -o DIR`: a CTest suite with one test per cell, for GPU resource groups.
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/run/runner.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {

void add_ctest_command(CLI::App &app, action &run_action) {
  struct ctest_cli {
    std::string matrix, dir;
    int gpu_count = 1;
    std::vector<std::string> extra;
  };
  auto ct = std::make_shared<ctest_cli>();
  auto *ctest = app.add_subcommand("ctest", "Write a CTest suite with one test per cell "
                                            "(RESOURCE_GROUPS gpus:1) and a merge, for "
                                            "`ctest -j --resource-spec-file`");
  ctest->add_option("matrix", ct->matrix, "Matrix file")->required();
  ctest->add_option("-o,--out", ct->dir, "Directory for the suite and its results")->required();
  ctest->add_option("--gpu-count", ct->gpu_count, "Devices in the generated resource spec")
      ->check(whole_number(1, limits::gpu_count_max));
  ctest->add_option("--run-arg", ct->extra,
                    "Extra argument for each cell's `cuparity run` "
                    "(repeatable)");
  ctest->callback([ct, &run_action] {
    run_action = [ct] { return write_ctest_suite(ct->matrix, ct->dir, ct->gpu_count, ct->extra); };
  });
}

} // namespace cuparity::cli
