// Numba's symbol-probing rules for the internal backend, as data (so tests can change them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

struct suffix_rules {
  /// Suffixes tried in order with the per-thread default stream on / off.
  std::vector<std::string> ptds_suffixes;
  std::vector<std::string> legacy_suffixes;
  /// Entries always bound to the bare symbol, whatever the suffix lists say.
  std::vector<std::string> pinned;

  /// Numba's Driver._find_api: PTDS probes _v2_ptds, _v2_ptsz, _ptds, _ptsz, _v2, "" and
  /// otherwise _v2, ""; cuCtxGetDevice and cuCtxSynchronize are pinned to the bare name
  /// (numba-cuda PR #185/#223) because CUDA 13 added cuCtxGetDevice_v2(CUdevice*, CUcontext) and
  /// cuCtxSynchronize_v2(CUcontext): probing would call them with missing arguments.
  static suffix_rules numba();

  /// The symbol names tried for `base`, in order.
  [[nodiscard]] std::vector<std::string> candidates(std::string_view base, bool ptds) const;
};

} // namespace cuparity
