// Hand-made matrices and records for the functional verdict's tests (no driver, no subprocess).
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/protocol/records.hpp"
#include "harness/verdict/compare.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace cuparity::verdict_test {

using json = nlohmann::json;

/// A scratch folder for the files a test writes, one per test binary.
inline std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / "cuparity-verdict-tests";
  std::filesystem::create_directories(dir);
  return dir;
}

/// Two axes, four cells: "A=0,B=0", "A=0,B=1", "A=1,B=0", "A=1,B=1"; `rules` is appended.
inline matrix load(const std::string &name, const std::string &rules = "") {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  // A and B stand for any variables; the no-op rule's own tests (test_noop_variables.cpp) judge
  // them, these tests judge the other rules (declared last, so line numbers stay).
  std::ofstream(path) << "[matrix]\nname = \"" << name << "\"\n[axes]\nA = [\"0\", \"1\"]\n"
                      << "B = [\"0\", \"1\"]\n"
                      << rules
                      << "\n[matrix.inert]\nA = \"a test's axis\"\nB = \"a test's axis\"\n";
  return load_matrix(path, [](const std::string &) { return true; });
}

/// An expectation of the A=1 cells (with `settings` lines) allowing `outcomes` for mem.* cases.
inline std::string allow_mem(const std::string &outcomes, const std::string &settings = "") {
  return "[[expect]]\nwhen = { A = \"1\" }\n" + settings +
         "[[expect.allow]]\ncases = [\"mem.*\"]\noutcomes = [" + outcomes +
         "]\nreason = \"known\"\n";
}

/// What a cell process reports; the defaults put every cell in one semantic group.
inline json config(json changes = json::object()) {
  json c{{"binding", "internal"}, {"stream0", "legacy"},  {"fallback", false},
         {"driver_path", "/d"},   {"include_path", "/i"}, {"warnings", json::array()}};
  c.update(changes);
  return c;
}

inline json cell_rec(const std::string &id, json cfg = config()) {
  return make_record(record_type::cell, {{"cell", id}, {"config", std::move(cfg)}});
}

inline json cell_error(const std::string &id, const std::string &kind,
                       const std::string &message = "") {
  return make_record(record_type::cell_error,
                     {{"cell", id},
                      {"kind", kind},
                      {"message", message.empty() ? id + " did not start" : message}});
}

inline json result(const std::string &cell, const std::string &id, outcome o,
                   json observations = json::object(), const std::string &message = "msg") {
  return to_json(case_record{cell, id, o, message, std::move(observations), 1});
}

inline bool any_case(const std::string &) {
  return true;
}

/// Every pair the records hold, once each: the plan of a run that covered what it recorded, for
/// tests about other rules than coverage.
inline std::vector<planned_pair> recorded_pairs(const std::vector<json> &records) {
  std::vector<planned_pair> out;
  for (const auto &r : records)
    if (is_record(r, record_type::case_result)) {
      planned_pair p{r.value("cell", ""), r.value("case", "")};
      if (std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
    }
  return out;
}

inline comparison compare(const matrix &m, const std::vector<json> &records,
                          const std::vector<baseline_entry> &baseline = {},
                          const std::function<bool(const std::string &)> &known = any_case) {
  return compare_results(m, records, recorded_pairs(records), baseline, known);
}

inline std::vector<std::string> kinds(const comparison &c) {
  std::vector<std::string> out;
  for (const auto &p : c.problems)
    out.push_back(p.kind);
  return out;
}

/// Each problem as "kind [cell] case: message", the way the console shows it.
inline std::vector<std::string> problems(const comparison &c) {
  std::vector<std::string> out;
  for (const auto &p : c.problems)
    out.push_back(p.kind + " [" + p.cell + "] " + p.case_id + ": " + p.message);
  return out;
}

inline std::vector<std::string> messages(const comparison &c) {
  std::vector<std::string> out;
  for (const auto &p : c.problems)
    out.push_back(p.message);
  return out;
}

/// A suite_end record of suite "ext" in `cell`, its processes having bound `bindings`.
inline json suite_end(const std::string &cell, json bindings) {
  return make_record(record_type::suite_end, {{"cell", cell},
                                              {"suite", "ext"},
                                              {"tests", 1},
                                              {"processes", json::array()},
                                              {"bindings", std::move(bindings)},
                                              {"evidence", json::object()}});
}

inline const std::string legacy_group = "stream0=legacy driver=/d include=/i";

} // namespace cuparity::verdict_test
