// Which installed Python distribution a loaded object belongs to, from the dist-info RECORDs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

struct distribution {
  std::string name;    ///< as its METADATA says ("cuda-bindings", "torch")
  std::string version; ///< "" when METADATA has none
};

/// For each of `paths` that lies in a site-packages or dist-packages folder and is listed in the
/// RECORD of a distribution installed there, that distribution. Paths outside such folders, or
/// listed by none, are absent from the result. Each folder's RECORDs are read once.
[[nodiscard]] std::map<std::string, distribution>
owning_distributions(const std::vector<std::string> &paths);

/// The distribution whose RECORD in the folder `site` (any folder on sys.path: site-packages, or
/// a `pip install --target` one) lists `relative` (a path below `site`), if any.
[[nodiscard]] std::optional<distribution> distribution_listing(const std::string &site,
                                                               const std::string &relative);

} // namespace cuparity
