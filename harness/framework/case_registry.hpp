// The case registry: every conformance case, registered once per case file, selected by glob.
#pragma once

#include "harness/framework/requirements.hpp"
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
  /// What the case needs: checked before the body runs; the only source of not_supported.
  case_requirements needs;

  [[nodiscard]] std::string suite() const { return id.substr(0, id.find('.')); }

  /// Declares driver functions the body calls, one need each (a need given as {{a}, {b, c}} is
  /// met by a, or by b with c).
  case_def &uses(std::initializer_list<entry_need> entries);
  case_def &uses(const std::vector<entry_need> &entries);
  case_def &needs_attribute(attribute_need a);
  case_def &needs_devices(int count);
  case_def &needs_driver(int version);
  case_def &needs_facility(facility_need f);
};

/// The project's own seven suites, in reporting order. Suites are open: a case of any other suite
/// name that follows the id rules registers as well, and reports after these.
[[nodiscard]] const std::vector<std::string> &builtin_suites();

class case_registry {
public:
  static case_registry &instance();
  /// Adds a case of any suite; a malformed id (not suite.group.name of [a-z0-9_]) or a duplicate
  /// one is a programming error and aborts at start-up with a message (cases are registered
  /// before main).
  case_def &add(case_def def); ///< the stored case, for setting attributes such as `exclusive`
  [[nodiscard]] const std::vector<case_def> &all() const noexcept { return m_cases; }
  [[nodiscard]] const case_def *find(const std::string &id) const noexcept;
  /// Every suite a registered case belongs to: the built-in ones in their order, then the others
  /// sorted by name.
  [[nodiscard]] std::vector<std::string> suites() const;
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
