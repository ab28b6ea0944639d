// Opening and closing the probes' shared environment.
#include "harness/probes/probe_fixture.hpp"

#include "harness/framework/device_architecture.hpp"

namespace cuparity {

probe_env open_probe_env(driver &d, CUdevice dev, CUcontext primary) {
  probe_env env{d};
  env.dev = dev;
  env.ctx = primary;
  d.cuCtxSetCurrent(env.ctx);
  if (const std::string &image = probe_registry::instance().fixture_image(); !image.empty())
    d.cuModuleLoadData(&env.module, kernel_image_for_device(image).data.data());
  d.cuStreamCreate(&env.stream, CU_STREAM_NON_BLOCKING);
  return env;
}

void close_probe_env(const probe_env &env) {
  (void)env.drv.cuStreamDestroy.raw(env.stream);
  if (env.module != nullptr)
    (void)env.drv.cuModuleUnload.raw(env.module);
  (void)env.drv.cuDevicePrimaryCtxRelease.raw(env.dev);
}

} // namespace cuparity
