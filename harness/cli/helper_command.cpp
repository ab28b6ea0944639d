// `cuparity helper NAME ARGS...`: the second process of a case (IPC), same binary, same env.
#include "harness/cli/commands.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/selection/session.hpp"
#include "harness/suite/helper_registry.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct helper_options {
  std::string name;
  std::vector<std::string> args;
};

int run_helper(const helper_options &opt) {
  const helper_fn *fn = helper_registry::instance().find(opt.name);
  if (!fn) {
    std::cerr << "cuparity helper: no helper named '" << opt.name << "'\n";
    return exit_code::bad_input;
  }
  try {
    auto sess = session::open(read_settings(process_environment(), executable_dir()));
    return (*fn)(sess->drv(), opt.args);
  } catch (const std::exception &e) {
    std::cerr << "cuparity helper " << opt.name << ": " << e.what() << "\n";
    return exit_code::failures;
  }
}

} // namespace

void add_helper_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<helper_options>();
  auto *cmd = app.add_subcommand("helper", "Run a case's helper process (internal use)");
  cmd->group(""); // hidden from --help: only cases start it
  cmd->add_option("name", opt->name, "Helper name")->required();
  cmd->add_option("args", opt->args, "Helper arguments");
  cmd->callback([opt, &run] { run = [opt] { return run_helper(*opt); }; });
}

} // namespace cuparity::cli
