// Device queries: count, names, attributes (an H100/H200-like sm_90 part whose compute capability
// CUPARITY_SIM_COMPUTE_CAPABILITY may change), UUIDs, peers.
#include "api.hpp"

#include <climits>
#include <cstdio>
#include <cstring>

namespace cuparity::sim {
namespace {

constexpr int sm_count = 132;

// Attributes the sim models. Values follow an sm_90 data-centre part; anything else answers
// CUDA_ERROR_INVALID_VALUE so an unmodelled query is loud rather than silently zero.
bool attribute_value(CUdevice_attribute a, int device, int &v) {
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    v = 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    v = 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    v = 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    v = 64;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    v = INT_MAX;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    v = 65535;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    v = 65535;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    v = 49152;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    v = 232448;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    v = 233472;
    return true;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
    v = 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
    v = 65536;
    return true;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    v = 32;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
    v = INT_MAX;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    v = 65536;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
    v = 65536;
    return true;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    v = 1980000;
    return true;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
    v = 3201000;
    return true;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    v = 6144;
    return true;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    v = 52428800;
    return true;
  case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
    v = 512;
    return true;
  case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    v = sm_count;
    return true;
  case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
    v = CU_COMPUTEMODE_DEFAULT;
    return true;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
    v = 0x18 + device;
    return true;
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_TCC_DRIVER:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
    v = 3;
    return true;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    v = 2048;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
    v = 32;
    return true;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    v = cfg().cc_major;
    return true;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    v = cfg().cc_minor;
    return true;
  case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID:
    v = device;
    return true;
  case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    v = 1;
    return true;
  case CU_DEVICE_ATTRIBUTE_MPS_ENABLED:
    v = 0;
    return true;
  case CU_DEVICE_ATTRIBUTE_NUMA_ID:
    v = -1;
    return true;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
    v = -1;
    return true;
  default:
    return false;
  }
}

} // namespace
} // namespace cuparity::sim

using namespace cuparity::sim;

CUPARITY_SIM_API(cuDeviceGetCount, (int *count), (count), bump(count)) {
  if (CUresult r = check_init())
    return r;
  if (count == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *count = device_count();
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDeviceGet, (CUdevice * device, int ordinal), (device, ordinal), bump(device)) {
  if (CUresult r = check_init())
    return r;
  if (device == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(ordinal))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDeviceGetName, (char *name, int len, CUdevice dev), (name, len, dev),
                 corrupt_byte(name)) {
  if (CUresult r = check_init())
    return r;
  if (name == nullptr || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  // The process's ordinal, not the host's: identical GPUs share one name on a real host, so a
  // case observing the name must not see which GPU its cell was given.
  std::snprintf(name, static_cast<std::size_t>(len), "cuparity simulated device %d", dev);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev),
                 (pi, attrib, dev), bump(pi)) {
  if (CUresult r = check_init())
    return r;
  if (pi == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  int value = 0;
  // The host's device: the attributes that tell devices apart (PCI bus, board) name the GPU, not
  // the process's ordinal for it.
  if (!attribute_value(attrib, host_device(dev), value))
    return CUDA_ERROR_INVALID_VALUE;
  *pi = value;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDeviceComputeCapability, (int *major, int *minor, CUdevice dev),
                 (major, minor, dev), bump(major)) {
  if (CUresult r = check_init())
    return r;
  if (major == nullptr || minor == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  *major = cfg().cc_major;
  *minor = cfg().cc_minor;
  return CUDA_SUCCESS;
}

namespace {
CUresult device_uuid(CUuuid *uuid, CUdevice dev) {
  if (CUresult r = check_init())
    return r;
  if (uuid == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  // Deterministic per device of the host, so observations recorded on the sim are stable across
  // runs, and a cell that CUDA_VISIBLE_DEVICES gave "1,0" sees host device 1's UUID first.
  const int host = host_device(dev);
  static constexpr char prefix[] = "cuparity-sim";
  std::memcpy(uuid->bytes, prefix, 12);
  uuid->bytes[12] = 0;
  uuid->bytes[13] = 0;
  uuid->bytes[14] = static_cast<char>((host >> 8) & 0xff);
  uuid->bytes[15] = static_cast<char>(host & 0xff);
  return CUDA_SUCCESS;
}

CUresult device_total_mem_query(std::size_t *bytes, CUdevice dev) {
  if (CUresult r = check_init())
    return r;
  if (bytes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = device_total_mem();
  return CUDA_SUCCESS;
}
} // namespace

// v1 and v2 differ only under MIG, which the sim does not model.
CUPARITY_SIM_API(cuDeviceGetUuid, (CUuuid * uuid, CUdevice dev), (uuid, dev), corrupt_byte(uuid)) {
  return device_uuid(uuid, dev);
}
CUPARITY_SIM_API(cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev), (uuid, dev),
                 corrupt_byte(uuid)) {
  return device_uuid(uuid, dev);
}

CUPARITY_SIM_API(cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev), (bytes, dev), bump(bytes)) {
  return device_total_mem_query(bytes, dev);
}

// The 32-bit ABI of CUDA 2.0: sizes above 4 GiB saturate (unverified; the real driver's answer
// for a large device through this ABI is not documented).
CUPARITY_SIM_API(cuDeviceTotalMem, (unsigned int *bytes, CUdevice dev), (bytes, dev), bump(bytes)) {
  if (bytes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t total = 0;
  if (CUresult r = device_total_mem_query(&total, dev))
    return r;
  *bytes = total > UINT_MAX ? UINT_MAX : static_cast<unsigned int>(total);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuDeviceCanAccessPeer, (int *canAccessPeer, CUdevice dev, CUdevice peerDev),
                 (canAccessPeer, dev, peerDev), bump(canAccessPeer)) {
  if (CUresult r = check_init())
    return r;
  if (canAccessPeer == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev) || !valid_device(peerDev))
    return CUDA_ERROR_INVALID_DEVICE;
  *canAccessPeer = dev != peerDev ? 1 : 0;
  return CUDA_SUCCESS;
}
