// The case registry: every conformance case, registered once per case file, selected by glob.
#pragma once

#include "harness/protocol/case_ids.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cuparity {

class case_context;

struct case_def {
  std::string id;          ///< suite.group.name, e.g. stream.default.semantics
  std::string description; ///< one line: what is checked
  std::function<void(case_context &)> body;
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  /// Runs with the GPU to itself: no other cell's case runs meanwhile (for device-wide
  /// measurements such as free memory, which concurrent cells would disturb).
  bool exclusive = false;
  /// Sends requests to the cell's helper server (a second process): a cell that selects such a
  /// case starts the server while its first cases run.
  bool helper = false;
  /// What the case costs, roughly, in seconds on one GPU under a full matrix (measured on an
  /// H200: most cases take milliseconds; those that create contexts or start a helper take
  /// seconds). The runner starts the costliest cells first; nothing judges it.
  double cost_s = 0.05;

  [[nodiscard]] std::string suite() const { return id.substr(0, id.find('.')); }
};

/// The seven suites, in reporting order.
[[nodiscard]] const std::vector<std::string> &known_suites();

class case_registry {
public:
  static case_registry &instance();
  /// Adds a case; a malformed or duplicate id is a programming error and aborts at start-up
  /// with a message (cases are registered before main).
  case_def &add(case_def def); ///< the stored case, for setting attributes such as `exclusive`
  [[nodiscard]] const std::vector<case_def> &all() const noexcept { return m_cases; }
  [[nodiscard]] const case_def *find(const std::string &id) const noexcept;
  /// Cases whose id matches any of `patterns` (fnmatch globs; a bare suite name selects the
  /// suite), minus those matching any of `excludes`, in registration order sorted by id.
  [[nodiscard]] std::vector<const case_def *>
  select(const std::vector<std::string> &patterns,
         const std::vector<std::string> &excludes = {}) const;

private:
  std::vector<case_def> m_cases;
};

/// Registration helper: one static instance per case file calls its suite's function before
/// main. Case files are compiled into an OBJECT library linked straight into the executable, so
/// the linker cannot drop them (Catch2 #421: static libraries lose self-registering objects).
struct case_file_registrar {
  explicit case_file_registrar(void (*register_cases)(case_registry &)) {
    register_cases(case_registry::instance());
  }
};

#define CUPARITY_CASE_FILE(fn)                                                                     \
  static void fn(::cuparity::case_registry &);                                                     \
  static const ::cuparity::case_file_registrar fn##_registrar{&fn};                                \
  static void fn(::cuparity::case_registry &registry)

} // namespace cuparity
