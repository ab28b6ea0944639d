// The kernel registry: which registered image a device of each architecture gets, and the errors
// for a name, an architecture or a registration it cannot serve.
#include "harness/framework/device_architecture.hpp"
#include "harness/framework/kernel_registry.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;

namespace {

const unsigned char bytes[] = {0};

/// A registry holding cubins and PTX for sm_75, 80, 86, 90 and 100, and a fatbin.
kernel_registry every_generation() {
  kernel_registry r;
  for (int sm : {75, 80, 86, 90, 100}) {
    r.add({"k", kernel_format::cubin, sm, {bytes, 1}});
    r.add({"k", kernel_format::ptx, sm, {bytes, 1}});
  }
  r.add({"k", kernel_format::fatbin, 0, {bytes, 1}});
  return r;
}

std::string message_of(const kernel_registry &r, const char *name, int sm) {
  try {
    (void)r.find(name, sm);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "(found)";
}

} // namespace

TEST_CASE("kernel registry: a cubin for the device's SM, else an older minor of its major",
          "[kernels]") {
  const kernel_registry r = every_generation();
  CHECK(r.find("k.cubin", 80).sm == 80);
  CHECK(r.find("k.cubin", 86).sm == 86);
  CHECK(r.find("k.cubin", 89).sm == 86); // sm_86 code runs on an L40S (8.9)
  CHECK(r.find("k.cubin", 90).sm == 90);
  CHECK(r.find("k.cubin", 100).sm == 100);
  CHECK(r.find("k.cubin", 103).sm == 100);
  CHECK(r.find("k.cubin", 90).format == kernel_format::cubin);
  // Machine code never runs on another major: sm_90 code on a 12.0 device is no answer.
  CHECK(message_of(r, "k.cubin", 120) ==
        "kernel image 'k.cubin': none runs on sm_120 (built for sm_75, sm_80, sm_86, sm_90, "
        "sm_100)");
}

TEST_CASE("kernel registry: PTX of the newest architecture no newer than the device", "[kernels]") {
  const kernel_registry r = every_generation();
  CHECK(r.find("k.ptx", 90).sm == 90);
  CHECK(r.find("k.ptx", 89).sm == 86);
  CHECK(r.find("k.ptx", 120).sm == 100); // JIT forwards onto a GPU newer than the toolkit's list
  CHECK(message_of(r, "k.ptx", 70).find("none runs on sm_70") != std::string::npos);
  CHECK(r.find("k.fatbin", 120).format == kernel_format::fatbin);
}

TEST_CASE("kernel registry: bad names and duplicates are errors naming them", "[kernels]") {
  kernel_registry r = every_generation();
  CHECK(message_of(r, "k.so", 90) ==
        "kernel image 'k.so': expected <kernel>.ptx, <kernel>.cubin or <kernel>.fatbin");
  CHECK(message_of(r, "other.cubin", 90) ==
        "kernel image 'other.cubin': none runs on sm_90 (none is registered)");
  r.add({"k", kernel_format::cubin, 90, {bytes, 1}});
  CHECK(message_of(r, "k.ptx", 90) == "kernel image k.cubin (sm_90) is registered twice");
}

TEST_CASE("device architecture: noted from the start's facts, unknown without a device",
          "[kernels]") {
  driver_facts facts;
  note_device_architecture(facts);
  CHECK_FALSE(device_architecture().known());
  CHECK_THROWS_WITH(kernel_image_for_device("basic.cubin"),
                    Catch::Contains("the device's compute capability is unknown"));
  device_fact dev;
  dev.cc_major = 8;
  dev.cc_minor = 6;
  facts.devices.push_back(dev);
  note_device_architecture(facts);
  CHECK(device_architecture().sm() == 86);
  note_device_architecture({});
}
