// The processes a suite's process left running when it ended: found, killed, reaped and named.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

/// A process found still running after its suite's process ended.
struct leftover_process {
  int pid = 0;
  std::string comm; ///< its name, as /proc/<pid>/stat gives it ("sleep")
};

/// Makes this process the subreaper of its descendants (prctl PR_SET_CHILD_SUBREAPER): a process
/// of a suite whose parent ends (a double-forked daemon) becomes this process's child, not
/// init's, so it can be reaped here once killed. Process-wide and idempotent; false when the
/// kernel refuses it (then killed leftovers are reaped by whichever process adopted them).
bool adopt_orphans() noexcept;

/// Every process but this one and `leader` (the suite's process, this process's child, ended and
/// not yet reaped: so neither its pid nor its process group can be taken meanwhile) that is in
/// the process group `leader` leads (what the suite started without leaving its group) or whose
/// environment holds `marker` ("NAME=value", a variable only this suite process was given: what
/// left the group, setsid and double fork included), SIGKILLed and, where it became this
/// process's child, reaped. Rescans until a scan finds none, at most leftover_rounds times (a
/// process forking as it is killed). Ended processes of the group that became this process's
/// children are reaped silently. Returns what was found running, in the order found; never
/// throws. A process that left both the group and the environment is not found. With
/// `group_killed` (the caller killed the group already: the suite's timeout) the processes still
/// in the group are ended the same way but not returned: they were ended, not left.
[[nodiscard]] std::vector<leftover_process>
end_leftover_processes(int leader, const std::string &marker, bool group_killed);

/// "2 processes: 4242 (sleep), 4250 (python3)" (at most 20 named, then "and N more").
[[nodiscard]] std::string describe_leftovers(const std::vector<leftover_process> &left);

inline constexpr int leftover_rounds = 50;

} // namespace cuparity
