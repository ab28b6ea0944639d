// Declared requirements: what they list, and the check against a cell's facts.
#include "harness/framework/requirements.hpp"

#include "harness/driver/device_facts.hpp"
#include "harness/driver/driver.hpp"

namespace cuparity {

entry_set case_requirements::declared() const {
  entry_set out;
  for (const auto &need : entries)
    for (const auto &alternative : need.alternatives)
      for (entry_id id : alternative)
        out.set(static_cast<std::size_t>(id));
  return out;
}

std::string alternative_text(const std::vector<entry_id> &alternative) {
  std::string out;
  for (entry_id id : alternative)
    out += (out.empty() ? "" : "+") + std::string(info(id).name);
  return out;
}

std::vector<std::string> case_requirements::describe() const {
  std::vector<std::string> out;
  for (const auto &need : entries) {
    std::string line;
    for (const auto &alternative : need.alternatives)
      line += (line.empty() ? "" : " | ") + alternative_text(alternative);
    out.push_back(line);
  }
  if (driver_version > 0)
    out.push_back("driver " + version_text(driver_version));
  if (devices > 1)
    out.push_back(std::to_string(devices) + " devices");
  for (const auto &a : attributes)
    out.push_back(a.name + (a.at_least == 1 ? "" : " >= " + std::to_string(a.at_least)));
  for (const auto &f : facilities)
    out.push_back(f.name);
  return out;
}

int cell_facts::driver_version() {
  if (!m_version) {
    int v = 0;
    m_driver.cuDriverGetVersion(&v);
    m_version = v;
  }
  return *m_version;
}

int cell_facts::device_count() {
  if (!m_devices) {
    int n = 0;
    m_driver.cuDeviceGetCount(&n);
    m_devices = n;
  }
  return *m_devices;
}

int cell_facts::attribute(CUdevice_attribute a) {
  const auto it = m_attributes.find(static_cast<int>(a));
  if (it != m_attributes.end())
    return it->second;
  CUdevice dev = 0;
  m_driver.cuDeviceGet(&dev, 0);
  int v = 0;
  m_driver.cuDeviceGetAttribute(&v, a, dev);
  m_attributes[static_cast<int>(a)] = v;
  return v;
}

std::string cell_facts::facility_missing(const facility_need &f) {
  const auto it = m_facilities.find(f.name);
  if (it != m_facilities.end())
    return it->second;
  std::string why = f.missing ? f.missing() : std::string();
  m_facilities[f.name] = why;
  return why;
}

namespace {

bool all_bound(driver &d, const std::vector<entry_id> &alternative) {
  for (entry_id id : alternative)
    if (!d.address(id))
      return false;
  return true;
}

/// Why `id` is not bound, and whether that is a cell without it (not_supported) or a driver that
/// should have it (failure): a binding that does not bind it, or a driver older than its ABI, is
/// the first; a driver that claims a version with the function and does not export it, the second.
unmet_requirement entry_unmet(cell_facts &facts, entry_id id) {
  const entry_info &e = info(id);
  const resolution &r = facts.drv().resolved(id);
  const std::string name(e.name);
  if (r.not_bound)
    return {name, "needs " + name + ": the binding under test does not bind it (" +
                      r.missing_reason + ")"};
  const int version = facts.driver_version();
  if (version < e.abi_version)
    return {name, "needs " + name + " (CUDA " + version_text(e.abi_version) + "): the driver is " +
                      version_text(version)};
  return {name,
          "needs " + name + ": the driver reports CUDA " + version_text(version) +
              ", which has it since " + version_text(e.abi_version) + ", but it is missing (" +
              r.missing_reason + ")",
          true};
}

std::optional<unmet_requirement> entries_unmet(const case_requirements &r, cell_facts &facts) {
  for (const auto &need : r.entries) {
    bool met = false;
    for (const auto &alternative : need.alternatives)
      met = met || all_bound(facts.drv(), alternative);
    if (met || need.alternatives.empty())
      continue;
    // Name the first missing entry of the first alternative: the call the case prefers.
    for (entry_id id : need.alternatives.front())
      if (!facts.drv().address(id)) {
        unmet_requirement u = entry_unmet(facts, id);
        if (need.alternatives.size() > 1) {
          std::string others;
          for (std::size_t i = 1; i < need.alternatives.size(); ++i)
            others += (others.empty() ? "" : ", ") + alternative_text(need.alternatives[i]);
          u.message += "; nor is its stand-in " + others;
        }
        return u;
      }
  }
  return std::nullopt;
}

} // namespace

std::optional<unmet_requirement> first_unmet(const case_requirements &r, cell_facts &facts) {
  if (auto u = entries_unmet(r, facts))
    return u;
  if (r.driver_version > 0 && facts.driver_version() < r.driver_version)
    return unmet_requirement{"driver " + version_text(r.driver_version),
                             "needs driver " + version_text(r.driver_version) + ": the driver is " +
                                 version_text(facts.driver_version())};
  if (r.devices > 1 && facts.device_count() < r.devices)
    return unmet_requirement{std::to_string(r.devices) + " devices",
                             "needs " + std::to_string(r.devices) +
                                 " devices: " + std::to_string(facts.device_count())};
  for (const auto &a : r.attributes) {
    const int v = facts.attribute(a.attribute);
    if (v < a.at_least)
      return unmet_requirement{
          a.name, "needs " + a.name + (a.at_least == 1 ? "" : " >= " + std::to_string(a.at_least)) +
                      ": " + std::to_string(v)};
  }
  for (const auto &f : r.facilities)
    if (std::string why = facts.facility_missing(f); !why.empty())
      return unmet_requirement{f.name, "needs " + f.name + ": " + why};
  return std::nullopt;
}

} // namespace cuparity
