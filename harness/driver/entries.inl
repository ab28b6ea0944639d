// The driver entry table: the single list every backend, the facade and the audit expand.
//
// CUPARITY_ENTRY(base_name, abi_version, (parameter types))
//   base_name    the name cuGetProcAddress takes (no _v2/_ptds/_ptsz suffix)
//   abi_version  the cuGetProcAddress version of the ABI this project calls. It must be the ABI
//                that Numba's suffix probing lands on for a current driver (the `_v2` symbol where
//                one exists, else the bare one), so both backends call the same function. For
//                example cuMemAlloc probes to cuMemAlloc_v2 = ABI 3020, cuDeviceGetUuid to
//                cuDeviceGetUuid_v2 = ABI 11040, cuCtxCreate to the 3-argument cuCtxCreate_v2 = 3020.
//   parameters   the C parameter types; harness/driver/entry_table.cpp static_asserts them against
//                cudaTypedefs.h's PFN_<base>_v<abi>, so a wrong prototype or ABI is a build error
//                (Numba's ctypes table had such bugs: docs/driver-facts.md#numba-prototype-bugs).
//
// Numba's two pins (cuCtxGetDevice, cuCtxSynchronize) stay at ABI 2000: CUDA 13 added `_v2`
// functions with other signatures under those names (docs/driver-facts.md#cuda-13-v2-functions).
// The pins themselves are data in backends/internal/probe_rules.cpp.
//
// No include guard: this file is meant to be included several times with different definitions.

// ---- init and device
CUPARITY_ENTRY(cuInit, 2000, (unsigned int))
CUPARITY_ENTRY(cuDriverGetVersion, 2020, (int *))
CUPARITY_ENTRY(cuGetErrorName, 6000, (CUresult, const char **))
CUPARITY_ENTRY(cuGetErrorString, 6000, (CUresult, const char **))
CUPARITY_ENTRY(cuGetProcAddress, 12000,
               (const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))
CUPARITY_ENTRY(cuDeviceGetCount, 2000, (int *))
CUPARITY_ENTRY(cuDeviceGet, 2000, (CUdevice *, int))
CUPARITY_ENTRY(cuDeviceGetName, 2000, (char *, int, CUdevice))
CUPARITY_ENTRY(cuDeviceGetAttribute, 2000, (int *, CUdevice_attribute, CUdevice))
CUPARITY_ENTRY(cuDeviceComputeCapability, 2000, (int *, int *, CUdevice))
CUPARITY_ENTRY(cuDeviceGetUuid, 11040, (CUuuid *, CUdevice))
CUPARITY_ENTRY(cuDeviceTotalMem, 3020, (size_t *, CUdevice))
CUPARITY_ENTRY(cuDeviceCanAccessPeer, 4000, (int *, CUdevice, CUdevice))

// ---- primary context
CUPARITY_ENTRY(cuDevicePrimaryCtxGetState, 7000, (CUdevice, unsigned int *, int *))
CUPARITY_ENTRY(cuDevicePrimaryCtxRelease, 11000, (CUdevice))
CUPARITY_ENTRY(cuDevicePrimaryCtxReset, 11000, (CUdevice))
CUPARITY_ENTRY(cuDevicePrimaryCtxRetain, 7000, (CUcontext *, CUdevice))
CUPARITY_ENTRY(cuDevicePrimaryCtxSetFlags, 11000, (CUdevice, unsigned int))

// ---- context
CUPARITY_ENTRY(cuCtxCreate, 3020, (CUcontext *, unsigned int, CUdevice))
CUPARITY_ENTRY(cuCtxDestroy, 4000, (CUcontext))
CUPARITY_ENTRY(cuCtxGetCurrent, 4000, (CUcontext *))
CUPARITY_ENTRY(cuCtxSetCurrent, 4000, (CUcontext))
CUPARITY_ENTRY(cuCtxPushCurrent, 4000, (CUcontext))
CUPARITY_ENTRY(cuCtxPopCurrent, 4000, (CUcontext *))
CUPARITY_ENTRY(cuCtxGetDevice, 2000, (CUdevice *))
CUPARITY_ENTRY(cuCtxSynchronize, 2000, ())
CUPARITY_ENTRY(cuCtxEnablePeerAccess, 4000, (CUcontext, unsigned int))
CUPARITY_ENTRY(cuCtxDisablePeerAccess, 4000, (CUcontext))
CUPARITY_ENTRY(cuCtxGetStreamPriorityRange, 5050, (int *, int *))

// ---- module and function
CUPARITY_ENTRY(cuModuleLoadData, 2000, (CUmodule *, const void *))
CUPARITY_ENTRY(cuModuleLoadDataEx, 2010, (CUmodule *, const void *, unsigned int, CUjit_option *,
                                          void **))
CUPARITY_ENTRY(cuModuleUnload, 2000, (CUmodule))
CUPARITY_ENTRY(cuModuleGetFunction, 2000, (CUfunction *, CUmodule, const char *))
CUPARITY_ENTRY(cuModuleGetGlobal, 3020, (CUdeviceptr *, size_t *, CUmodule, const char *))
CUPARITY_ENTRY(cuFuncGetAttribute, 2020, (int *, CUfunction_attribute, CUfunction))
CUPARITY_ENTRY(cuFuncSetAttribute, 9000, (CUfunction, CUfunction_attribute, int))
CUPARITY_ENTRY(cuFuncSetCacheConfig, 3000, (CUfunction, CUfunc_cache))

// ---- memory
CUPARITY_ENTRY(cuMemAlloc, 3020, (CUdeviceptr *, size_t))
CUPARITY_ENTRY(cuMemFree, 3020, (CUdeviceptr))
CUPARITY_ENTRY(cuMemAllocManaged, 6000, (CUdeviceptr *, size_t, unsigned int))
CUPARITY_ENTRY(cuMemGetInfo, 3020, (size_t *, size_t *))
CUPARITY_ENTRY(cuMemGetAddressRange, 3020, (CUdeviceptr *, size_t *, CUdeviceptr))
CUPARITY_ENTRY(cuMemsetD8, 3020, (CUdeviceptr, unsigned char, size_t))
CUPARITY_ENTRY(cuMemsetD32, 3020, (CUdeviceptr, unsigned int, size_t))
CUPARITY_ENTRY(cuMemsetD8Async, 3020, (CUdeviceptr, unsigned char, size_t, CUstream))
CUPARITY_ENTRY(cuMemcpyHtoD, 3020, (CUdeviceptr, const void *, size_t))
CUPARITY_ENTRY(cuMemcpyDtoH, 3020, (void *, CUdeviceptr, size_t))
CUPARITY_ENTRY(cuMemcpyDtoD, 3020, (CUdeviceptr, CUdeviceptr, size_t))
CUPARITY_ENTRY(cuMemcpyHtoDAsync, 3020, (CUdeviceptr, const void *, size_t, CUstream))
CUPARITY_ENTRY(cuMemcpyDtoHAsync, 3020, (void *, CUdeviceptr, size_t, CUstream))
CUPARITY_ENTRY(cuMemcpyDtoDAsync, 3020, (CUdeviceptr, CUdeviceptr, size_t, CUstream))
CUPARITY_ENTRY(cuMemHostAlloc, 2020, (void **, size_t, unsigned int))
CUPARITY_ENTRY(cuMemFreeHost, 2000, (void *))
CUPARITY_ENTRY(cuMemHostRegister, 6050, (void *, size_t, unsigned int))
CUPARITY_ENTRY(cuMemHostUnregister, 4000, (void *))
CUPARITY_ENTRY(cuMemHostGetDevicePointer, 3020, (CUdeviceptr *, void *, unsigned int))
CUPARITY_ENTRY(cuMemHostGetFlags, 2030, (unsigned int *, void *))
CUPARITY_ENTRY(cuPointerGetAttribute, 4000, (void *, CUpointer_attribute, CUdeviceptr))
CUPARITY_ENTRY(cuMemAllocAsync, 11020, (CUdeviceptr *, size_t, CUstream))
CUPARITY_ENTRY(cuMemFreeAsync, 11020, (CUdeviceptr, CUstream))
CUPARITY_ENTRY(cuMemPrefetchAsync, 12020, (CUdeviceptr, size_t, CUmemLocation, unsigned int,
                                           CUstream))
CUPARITY_ENTRY(cuMemAdvise, 12020, (CUdeviceptr, size_t, CUmem_advise, CUmemLocation))

// ---- stream and event
CUPARITY_ENTRY(cuStreamCreate, 2000, (CUstream *, unsigned int))
CUPARITY_ENTRY(cuStreamCreateWithPriority, 5050, (CUstream *, unsigned int, int))
CUPARITY_ENTRY(cuStreamDestroy, 4000, (CUstream))
CUPARITY_ENTRY(cuStreamSynchronize, 2000, (CUstream))
CUPARITY_ENTRY(cuStreamQuery, 2000, (CUstream))
CUPARITY_ENTRY(cuStreamWaitEvent, 3020, (CUstream, CUevent, unsigned int))
CUPARITY_ENTRY(cuStreamAddCallback, 5000, (CUstream, CUstreamCallback, void *, unsigned int))
CUPARITY_ENTRY(cuStreamGetPriority, 5050, (CUstream, int *))
CUPARITY_ENTRY(cuStreamGetFlags, 5050, (CUstream, unsigned int *))
CUPARITY_ENTRY(cuLaunchHostFunc, 10000, (CUstream, CUhostFn, void *))
CUPARITY_ENTRY(cuEventCreate, 2000, (CUevent *, unsigned int))
CUPARITY_ENTRY(cuEventDestroy, 4000, (CUevent))
CUPARITY_ENTRY(cuEventRecord, 2000, (CUevent, CUstream))
CUPARITY_ENTRY(cuEventQuery, 2000, (CUevent))
CUPARITY_ENTRY(cuEventSynchronize, 2000, (CUevent))
CUPARITY_ENTRY(cuEventElapsedTime, 12080, (float *, CUevent, CUevent))

// ---- launch
CUPARITY_ENTRY(cuLaunchKernel, 4000, (CUfunction, unsigned int, unsigned int, unsigned int,
                                      unsigned int, unsigned int, unsigned int, unsigned int,
                                      CUstream, void **, void **))
CUPARITY_ENTRY(cuLaunchCooperativeKernel, 9000, (CUfunction, unsigned int, unsigned int,
                                                 unsigned int, unsigned int, unsigned int,
                                                 unsigned int, unsigned int, CUstream, void **))

// ---- linker
CUPARITY_ENTRY(cuLinkCreate, 6050, (unsigned int, CUjit_option *, void **, CUlinkState *))
CUPARITY_ENTRY(cuLinkAddData, 6050, (CUlinkState, CUjitInputType, void *, size_t, const char *,
                                     unsigned int, CUjit_option *, void **))
CUPARITY_ENTRY(cuLinkAddFile, 6050, (CUlinkState, CUjitInputType, const char *, unsigned int,
                                     CUjit_option *, void **))
CUPARITY_ENTRY(cuLinkComplete, 5050, (CUlinkState, void **, size_t *))
CUPARITY_ENTRY(cuLinkDestroy, 5050, (CUlinkState))

// ---- occupancy
CUPARITY_ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, (int *, CUfunction, int, size_t))
CUPARITY_ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000,
               (int *, CUfunction, int, size_t, unsigned int))
CUPARITY_ENTRY(cuOccupancyMaxPotentialBlockSize, 6050,
               (int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int))
CUPARITY_ENTRY(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000,
               (int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int, unsigned int))

// ---- IPC
CUPARITY_ENTRY(cuIpcGetMemHandle, 4010, (CUipcMemHandle *, CUdeviceptr))
CUPARITY_ENTRY(cuIpcOpenMemHandle, 11000, (CUdeviceptr *, CUipcMemHandle, unsigned int))
CUPARITY_ENTRY(cuIpcCloseMemHandle, 4010, (CUdeviceptr))
CUPARITY_ENTRY(cuIpcGetEventHandle, 4010, (CUipcEventHandle *, CUevent))
CUPARITY_ENTRY(cuIpcOpenEventHandle, 4010, (CUevent *, CUipcEventHandle))

// ---- profiler
CUPARITY_ENTRY(cuProfilerStart, 4000, ())
CUPARITY_ENTRY(cuProfilerStop, 4000, ())
