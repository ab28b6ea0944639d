// The host's stable identity: its machine-id (systemd's machine-id(5)), read defensively.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

/// Where the machine id is kept: /etc/machine-id, then D-Bus's older copy.
[[nodiscard]] const std::vector<std::string> &machine_id_paths();

/// The machine id (32 lowercase hex digits) of the first of `paths` that holds one (32 hex digits
/// on its first line, as machine-id(5) writes it); "" when none does: a missing or unreadable
/// file, an empty one (an image not yet booted), "uninitialized". Never throws. machine-id(5)
/// asks that the id itself not be exposed: provenance publishes a keyed hash of it.
[[nodiscard]] std::string
read_machine_id(const std::vector<std::string> &paths = machine_id_paths());

} // namespace cuparity
