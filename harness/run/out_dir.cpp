// The output directory's states and what a new run, --resume and --force do with each.
#include "harness/run/out_dir.hpp"

#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/plan_identity.hpp"
#include "harness/run/provenance.hpp"
#include "harness/run/run_layout.hpp"

#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string &message) {
  throw out_dir_error(message);
}

bool holds(const std::string &path) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  return !ec && st.type() != fs::file_type::not_found;
}

/// "<path>.<UTC time>-<pid>[-k].bak": the first such name that is free. The folder is locked,
/// so no other cuparity process picks the same one meanwhile.
std::string backup_name(const std::string &path) {
  std::string stamp = utc_now();
  std::erase(stamp, ':');
  const std::string base = path + "." + stamp + "-" + std::to_string(getpid());
  std::string name = base + ".bak";
  for (int k = 2; holds(name); ++k)
    name = base + "-" + std::to_string(k) + ".bak";
  return name;
}

/// Whether a recorded plan is as the runner wrote it: its fingerprint is the digest of the rest
/// (plan_description), so an edited plan, or an edited fingerprint, no longer matches.
bool plan_intact(const nlohmann::json &plan) {
  if (!plan.is_object() || !plan.contains("fingerprint") || !plan["fingerprint"].is_string())
    return false;
  nlohmann::json rest = plan;
  rest.erase("fingerprint");
  return digest_hex(rest.dump()) == plan["fingerprint"].get<std::string>();
}

/// The resumed results must come from this very plan: one run record, first, as written.
void check_resumable(const std::string &path, const std::vector<nlohmann::json> &previous,
                     const nlohmann::json &plan) {
  std::vector<std::size_t> runs;
  for (std::size_t i = 0; i < previous.size(); ++i)
    if (is_record(previous[i], record_type::run))
      runs.push_back(i);
  if (runs.empty())
    refuse("--resume: " + path + " has no run record; it is no results file of a cuparity run");
  if (runs.size() > 1 || runs[0] != 0)
    refuse("--resume: " + path + " holds " + std::to_string(runs.size()) +
           " run record(s), the first as record " + std::to_string(runs[0] + 1) +
           ": one run's results begin with its one run record (two files joined, or edited?); "
           "start over with --force (the old file is kept)");
  const nlohmann::json &r = previous[runs[0]];
  if (!r.contains("plan"))
    refuse(path + " was recorded without a plan (an older cuparity): it cannot be resumed "
                  "safely; start over with --force (the old file is kept)");
  if (!plan_intact(r["plan"]))
    refuse("--resume: " + path +
           ": its run record's plan does not match its fingerprint (the "
           "file was edited); start over with --force (the old file is "
           "kept)");
  if (const auto d = plan_difference(r["plan"], plan, resume_parts()); !d.empty())
    refuse("--resume: " + path + " holds results of another plan: " + d +
           "; use the same matrix, options, driver and binary, or --force to start over");
}

/// A folder holding a stored run's compressed results: what --resume, a new run or --force do.
void stored_results(const out_dir_request &rq, const std::string &gz) {
  if (rq.resume) {
    try {
      (void)read_results(gz); // a garbled file is named as such
    } catch (const std::exception &e) {
      refuse("--resume: " + std::string(e.what()));
    }
    refuse("--resume: " + gz +
           " holds a stored run's compressed results, and a run appends to "
           "results.jsonl: decompress it (gunzip) to resume that run, or use "
           "--force to start over (it is kept)");
  }
  if (!rq.force)
    refuse(rq.dir + " holds a stored run's results (results.jsonl.gz): use --force to start "
                    "over here (it is kept), or another --out");
  set_aside_run_files(rq.dir, "run");
}

std::vector<nlohmann::json> resume_from(const std::string &results, const nlohmann::json &plan) {
  std::vector<nlohmann::json> previous;
  try {
    previous = read_results(results).records;
    check_resumable(results, previous, plan);
    if (auto torn = set_aside_torn_tail(results))
      std::cerr << "cuparity run: --resume: " << results << " ended in a cut-off record (a "
                << "killed run); its bytes are kept in " << *torn << "\n";
  } catch (const out_dir_error &) {
    throw;
  } catch (const std::exception &e) {
    refuse(e.what());
  }
  return previous;
}

bool has_results(const std::string &path) {
  std::error_code ec;
  return holds(path) && !(fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0);
}

} // namespace

void set_aside_run_files(const std::string &dir, const std::string &command) {
  for (const char *file : {"results.jsonl", "results.jsonl.gz", "summary.json", "junit.xml"}) {
    const std::string path = dir + "/" + file;
    if (!holds(path))
      continue;
    const std::string kept = backup_name(path);
    std::error_code ec;
    fs::rename(path, kept, ec);
    if (ec)
      refuse(command + " --force: cannot move " + path + " aside: " + ec.message());
    std::cerr << "cuparity " << command << ": --force: previous " << file << " kept as " << kept
              << "\n";
  }
}

prepared_out_dir prepare_out_dir(const out_dir_request &rq) {
  std::error_code ec;
  fs::create_directories(rq.dir + "/logs", ec);
  if (ec)
    refuse("cannot create the output directory " + rq.dir + "/logs: " + ec.message());
  prepared_out_dir out;
  try {
    out.lock = std::make_unique<out_lock>(rq.dir);
  } catch (const std::exception &e) {
    refuse(e.what());
  }
  const std::string results = rq.dir + "/results.jsonl";
  if (has_results(results)) {
    if (rq.resume)
      out.previous = resume_from(results, rq.plan);
    else if (rq.force)
      set_aside_run_files(rq.dir, "run");
    else
      refuse(rq.dir + " already holds results: use --resume to complete them, --force to start "
                      "over (the old files are kept), or another --out");
    return out;
  }
  if (holds(results + ".gz")) {
    stored_results(rq, results + ".gz");
    return out;
  }
  if (holds(rq.dir + "/summary.json") || holds(rq.dir + "/junit.xml")) {
    if (!rq.force)
      refuse(rq.dir + " holds the summary of another run (summary.json or junit.xml, no "
                      "results.jsonl): use --force to write here anyway (they are kept), or "
                      "another --out");
    set_aside_run_files(rq.dir, "run");
  } else if (rq.resume) {
    std::cerr << "cuparity run: --resume: nothing recorded in " << rq.dir << " yet; starting\n";
  }
  return out;
}

} // namespace cuparity
