// Where a run puts its files: per-cell logs, per-GPU lock directories, names safe for a path.
#pragma once

#include <string>

namespace cuparity {

/// A file name for `s`, bounded (at most 96 characters) and injective (up to collisions of a
/// 64-bit digest): `s` itself when it holds only [A-Za-z0-9._-], is short and does not end like
/// a digest; otherwise `s` with other characters replaced by '_' (cell ids hold '=' and ','),
/// cut to a prefix, then "-" and a 16-digit digest of `s`.
[[nodiscard]] std::string file_safe(const std::string &s);

/// A stable 64-bit digest of `s` (FNV-1a) as 16 hex digits: for names and fingerprints, not for
/// security.
[[nodiscard]] std::string digest_hex(const std::string &s);

/// The log a cell's processes append their stdout and stderr to, in `log_dir`.
[[nodiscard]] std::string cell_log_path(const std::string &log_dir, const std::string &cell_id);

/// The lock directory shared by the cells of a run, per GPU (the first of `gpu`'s devices):
/// exclusive cases wait for the cases of other cells on the same device, not for cells on other
/// devices. Created under `out_dir`; returned absolute, as the cells run elsewhere.
[[nodiscard]] std::string lock_directory(const std::string &out_dir, const std::string &gpu);

} // namespace cuparity
