// The run's step summary is rendered from the summary.json the run wrote, never from its memory.
#include "harness/cli/step_summary_run.hpp"

#include "harness/io/output_file.hpp"
#include "harness/matrix/matrix.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/summary_document.hpp"
#include "harness/report/summary_reader.hpp"
#include "harness/run/run_layout.hpp"

#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity::cli {
namespace {

namespace fs = std::filesystem;

file_stamp stamp_of(const std::string &path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return {};
  return {true, st.st_dev, st.st_ino, st.st_mtim};
}

bool same_stamp(const file_stamp &a, const file_stamp &b) {
  return a.exists == b.exists && a.dev == b.dev && a.ino == b.ino &&
         a.mtime.tv_sec == b.mtime.tv_sec && a.mtime.tv_nsec == b.mtime.tv_nsec;
}

/// The runner's default --out (harness/run/runner.cpp, read_inputs): cuparity-results/ and the
/// matrix's name made file-safe; "" when the matrix does not load (the run refuses it itself).
std::string default_out_dir(const std::string &matrix_path) {
  try {
    const matrix m = load_matrix(matrix_path, [](const std::string &) { return true; });
    return "cuparity-results/" + file_safe(m.name);
  } catch (const std::exception &) {
    return "";
  }
}

/// Throws bad_input_error when `t` cannot take the page: check_output_file's reasons, a file or
/// folder this process may not write, or one of the run's own files.
void check_target(const markdown_target &t, const std::string &out_dir) {
  check_output_file(t.path, t.what);
  const std::string name = named_file(t.path, t.what);
  const fs::path parent =
      fs::path(t.path).parent_path().empty() ? fs::path(".") : fs::path(t.path).parent_path();
  if (access(t.path.c_str(), F_OK) == 0 ? access(t.path.c_str(), W_OK) != 0
                                        : access(parent.c_str(), W_OK) != 0)
    throw bad_input_error(name + ": cannot be written (permission denied)");
  if (out_dir.empty())
    return;
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(t.path, ec);
  for (const char *own : {"summary.json", "junit.xml", "results.jsonl"}) {
    std::error_code ec2;
    const fs::path file = fs::weakly_canonical(fs::path(out_dir) / own, ec2);
    if (!ec && !ec2 && target == file)
      throw bad_input_error(name + ": is the run's own " + own + "; name another file");
  }
}

void write_page(const pending_step_summary &p, int code) {
  const std::string summary_path = p.out_dir + "/summary.json";
  if (p.out_dir.empty() || same_stamp(stamp_of(summary_path), p.old_summary)) {
    write_markdown_text(p.target, no_verdict_markdown(p.matrix_path, code));
    return;
  }
  write_markdown(p.target, read_summary_document(summary_path).summary, p.out_dir);
  std::cout << "cuparity: wrote the step summary " << p.target.path << "\n";
}

} // namespace

std::optional<pending_step_summary> prepare_step_summary(const markdown_target &target,
                                                         run_options &options) {
  if (options.out_dir.empty())
    options.out_dir = default_out_dir(options.matrix_path);
  try {
    check_target(target, options.out_dir);
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity run: " << e.what() << "\n";
    return std::nullopt;
  }
  return pending_step_summary{target, options.matrix_path, options.out_dir,
                              stamp_of(options.out_dir + "/summary.json")};
}

int finish_step_summary(const pending_step_summary &pending, int code) {
  int failed = exit_code::ok;
  std::string why;
  try {
    write_page(pending, code);
    return code;
  } catch (const output_write_error &e) {
    failed = exit_code::environment, why = e.what();
  } catch (const bad_input_error &e) {
    failed = exit_code::bad_input, why = e.what();
  } catch (const summary_input_error &e) { // the run's own summary does not read back
    failed = exit_code::failures, why = e.what();
  }
  std::cerr << "cuparity run: no step summary: " << why << " (the run's results are in "
            << (pending.out_dir.empty() ? std::string("its --out folder") : pending.out_dir)
            << ")\n";
  return code != exit_code::ok ? code : failed;
}

} // namespace cuparity::cli
