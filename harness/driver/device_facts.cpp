// Queries driver version and devices through the facade, recording failures instead of throwing.
#include "harness/driver/device_facts.hpp"

#include "harness/driver/driver_text.hpp"

#include <cstdio>

namespace cuparity {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

static std::string uuid_text(const CUuuid &u) {
  const auto *b = reinterpret_cast<const unsigned char *>(u.bytes);
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

driver_facts query_driver_facts(driver &d, driver_init init) {
  driver_facts f;
  try {
    d.cuDriverGetVersion(&f.driver_version);
    if (init == driver_init::call)
      d.cuInit(0);
    int count = 0;
    d.cuDeviceGetCount(&count);
    for (int i = 0; i < count; ++i) {
      device_fact df;
      df.ordinal = i;
      CUdevice dev = 0;
      d.cuDeviceGet(&dev, i);
      char name[256] = {};
      d.cuDeviceGetName(name, sizeof name, dev);
      df.name = valid_utf8(name); // a driver may return any bytes
      d.cuDeviceGetAttribute(&df.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      d.cuDeviceGetAttribute(&df.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      d.cuDeviceTotalMem(&df.total_memory, dev);
      CUuuid u{};
      d.cuDeviceGetUuid(&u, dev);
      df.uuid = uuid_text(u);
      f.devices.push_back(std::move(df));
    }
  } catch (const std::exception &e) {
    f.init_error = e.what();
  }
  return f;
}

} // namespace cuparity
