// The machine id (machine-id(5)), read defensively: provenance publishes only a keyed hash of it.
#include "harness/platform/host_id.hpp"

#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace cuparity {
namespace {

constexpr std::size_t machine_id_digits = 32;

/// The machine id in one file's text (lowercase), or "".
std::string machine_id_in(std::string_view text) {
  const auto end = text.find_first_of("\r\n");
  std::string_view id = text.substr(0, end);
  while (!id.empty() && (id.back() == ' ' || id.back() == '\t'))
    id.remove_suffix(1);
  if (id.size() != machine_id_digits)
    return {};
  for (char c : id)
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return {};
  std::string out(id);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

const std::vector<std::string> &machine_id_paths() {
  static const std::vector<std::string> paths{"/etc/machine-id", "/var/lib/dbus/machine-id"};
  return paths;
}

std::string read_machine_id(const std::vector<std::string> &paths) {
  try {
    for (const auto &path : paths) {
      // A regular file only: a FIFO planted at the path must not block the run.
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec))
        continue;
      std::ifstream in(path, std::ios::binary);
      std::array<char, 128> buf{}; // 33 bytes when well formed
      in.read(buf.data(), buf.size());
      const auto id = machine_id_in({buf.data(), static_cast<std::size_t>(in.gcount())});
      if (!id.empty())
        return id;
    }
  } catch (const std::exception &) { // out of memory at worst: no id, the run goes on
  }
  return {};
}

} // namespace cuparity
