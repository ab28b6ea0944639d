// What suites and programs share in a cell: its record from captured maps, their audit, records.
#pragma once

#include "harness/external/suite_evidence.hpp"
#include "harness/external/suite_process.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/cell_watch.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// Appends a record of `type` for cell `c` (its "cell" member set here).
void append_cell_record(const cell_runner &r, const cell &c, record_type type,
                        nlohmann::json fields);

/// The cell's record, from captured evidence: the semantic group of a suite's or a program's cell
/// is what its processes bound ("captured" binding, the stream-0 mode they bound, "none" when no
/// process bound the driver). `what` names the source ("suite simpkg", "program torch").
void append_captured_cell_record(const cell_runner &r, const cell &c, const std::string &gpu,
                                 const suite_evidence &e, const std::string &what);

/// Each map audited by `cuparity audit --map` in the cell's environment `env` (the driver it names
/// is the one the audit asks), its report beside the map's folder in `dir`, findings summed:
/// {"maps", "audited", "failed", "counts"}.
[[nodiscard]] nlohmann::json audit_captured_maps(const std::vector<std::string> &maps,
                                                 const std::string &dir,
                                                 const std::map<std::string, std::string> &env);

/// One process of a suite or program in its suite_end record's `processes[]`: how it ended, how
/// many tests it reported, the test in flight when it ended abnormally and the tests it was
/// limited to (null: none), with the pids it left behind.
[[nodiscard]] nlohmann::json process_record(const suite_process_result &p, const std::string &tag,
                                            std::size_t tests, nlohmann::json in_flight,
                                            nlohmann::json only);

} // namespace cuparity
