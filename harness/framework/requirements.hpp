// What a case declares it needs, and the check that decides not_supported before its body runs.
//
// VK-GL-CTS's checkSupport(), as data: a case states the driver entries it calls, the device
// attributes, devices, driver version and toolkit parts it needs. The runner checks them against
// the cell's own facts (its binding, its driver, its device) before the body; only a requirement
// that is missing there makes the case not_supported, and the message names it. Inside the body a
// refusal of a met requirement is a failure, and a call the case did not declare is a harness
// error (the declaration is wrong): docs/verdicts.md#requirements.
#pragma once

#include "harness/driver/cuda_api.hpp"
#include "harness/driver/entry.hpp"

#include <bitset>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

class driver;

/// A set of entries, by entry_id.
using entry_set = std::bitset<entry_count>;

/// One driver function a case calls, with the stand-ins it may use instead: the need is met when
/// every entry of any one alternative is bound (cuCtxSetCurrent, or cuCtxPushCurrent with
/// cuCtxPopCurrent, as a package whose table lacks the first would do).
struct entry_need {
  std::vector<std::vector<entry_id>> alternatives;

  entry_need(entry_id id) : alternatives{{id}} {} // NOLINT: a bare entry is the common need
  entry_need(std::initializer_list<std::vector<entry_id>> alts) : alternatives(alts) {}
};

/// A device attribute of device 0 that must be at least `at_least`.
struct attribute_need {
  CUdevice_attribute attribute{};
  std::string name; ///< CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
  int at_least = 1;
};

/// Something outside the driver a case needs (a toolkit library): `missing` returns "" when it is
/// there, else why not. Checked once per process.
struct facility_need {
  std::string name; ///< NVRTC
  std::function<std::string()> missing;
};

struct case_requirements {
  std::vector<entry_need> entries;
  std::vector<attribute_need> attributes;
  int devices = 1;        ///< devices this process must see
  int driver_version = 0; ///< cuDriverGetVersion at least (0: any)
  std::vector<facility_need> facilities;

  /// Every entry of every alternative: what the body may call.
  [[nodiscard]] entry_set declared() const;
  /// One line per requirement, for `cuparity list` ("cuCtxSetCurrent | cuCtxPushCurrent+...").
  [[nodiscard]] std::vector<std::string> describe() const;
};

/// Declares the attribute under its own name: CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_X, 1).
#define CUPARITY_ATTRIBUTE(attr, at_least)                                                         \
  ::cuparity::attribute_need {                                                                     \
    attr, #attr, at_least                                                                          \
  }

/// What the check found missing. `supported` false: the requirement does not hold in this cell
/// (not_supported). `supported` true with a reason: the requirement should hold and the driver
/// broke it (a failure), e.g. a driver of version 13.0 that does not export cuMemAllocAsync.
struct unmet_requirement {
  std::string requirement; ///< what was needed: "cuMemAllocAsync", "2 devices", "NVRTC"
  std::string message;     ///< "needs cuMemAllocAsync: not in the captured map"
  bool failure = false;    ///< the driver should have met it
};

/// The facts requirements are checked against, asked of the driver once per process (the first
/// case that needs one asks). The queries are checked calls: a driver that refuses one throws
/// driver_error, and the case fails naming the query, since its requirement cannot be decided.
class cell_facts {
public:
  explicit cell_facts(driver &d) : m_driver(d) {}
  [[nodiscard]] driver &drv() noexcept { return m_driver; }
  [[nodiscard]] int driver_version();
  [[nodiscard]] int device_count();
  [[nodiscard]] int attribute(CUdevice_attribute a);
  [[nodiscard]] std::string facility_missing(const facility_need &f);

private:
  driver &m_driver;
  std::optional<int> m_version, m_devices;
  std::map<int, int> m_attributes;
  std::map<std::string, std::string> m_facilities;
};

/// The first requirement of `r` this cell does not meet, in declaration order: entries, driver
/// version, devices, attributes, facilities. Throws driver_error when a query it needs fails.
[[nodiscard]] std::optional<unmet_requirement> first_unmet(const case_requirements &r,
                                                           cell_facts &facts);

/// The words for an alternative: "cuCtxPushCurrent+cuCtxPopCurrent".
[[nodiscard]] std::string alternative_text(const std::vector<entry_id> &alternative);

} // namespace cuparity
