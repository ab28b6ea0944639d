// Children that die with their parent: PR_SET_PDEATHSIG, armed by the child program at its start.
#pragma once

namespace cuparity {

/// The variable through which subprocess (spawn) tells every child the pid of the process that
/// started it. Set for every child, whatever its process_spec::env says.
inline constexpr const char *parent_pid_variable = "CUPARITY_PARENT_PID";

/// Called first thing by a program that subprocess may start (cuparity's main). When
/// parent_pid_variable is set: removes it (a program this process starts some other way must not
/// see a stale pid), asks the kernel for SIGKILL when the parent goes (PR_SET_PDEATHSIG), and
/// kills this process at once when the pid is no longer among its ancestors (the parent is gone
/// already). Without the variable (started by a shell, by CTest) it does nothing.
void die_with_parent() noexcept;

} // namespace cuparity
