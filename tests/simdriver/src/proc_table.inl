// What cuGetProcAddress resolves: base name, ABI version (cudaTypedefs.h PFN_<base>_v<ver>), the
// exported symbol for the legacy default stream, and the per-thread (_ptds/_ptsz) one.
//   CUPARITY_SIM_PROC(base, abi, symbol)            no per-thread variant
//   CUPARITY_SIM_PROC_PT(base, abi, symbol, ptsym)  per-thread variant picked by the PTDS flag
// The per-thread symbols date from CUDA 7.0 (PFN_*_v7000_ptds). Asked for with the PTDS flag at an
// older version, the real driver (580.159.04, H200) returns no pointer and VERSION_NOT_SUFFICIENT;
// proc_address.cpp does the same.
// No include guard: an X-macro list.

// init and device
CUPARITY_SIM_PROC(cuInit, 2000, cuInit)
CUPARITY_SIM_PROC(cuDriverGetVersion, 2020, cuDriverGetVersion)
CUPARITY_SIM_PROC(cuGetErrorName, 6000, cuGetErrorName)
CUPARITY_SIM_PROC(cuGetErrorString, 6000, cuGetErrorString)
CUPARITY_SIM_PROC(cuGetProcAddress, 11030, cuGetProcAddress)
CUPARITY_SIM_PROC(cuGetProcAddress, 12000, cuGetProcAddress_v2)
CUPARITY_SIM_PROC(cuDeviceGetCount, 2000, cuDeviceGetCount)
CUPARITY_SIM_PROC(cuDeviceGet, 2000, cuDeviceGet)
CUPARITY_SIM_PROC(cuDeviceGetName, 2000, cuDeviceGetName)
CUPARITY_SIM_PROC(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute)
CUPARITY_SIM_PROC(cuDeviceComputeCapability, 2000, cuDeviceComputeCapability)
CUPARITY_SIM_PROC(cuDeviceGetUuid, 9020, cuDeviceGetUuid)
CUPARITY_SIM_PROC(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2)
CUPARITY_SIM_PROC(cuDeviceTotalMem, 2000, cuDeviceTotalMem)
CUPARITY_SIM_PROC(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2)
CUPARITY_SIM_PROC(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer)

// primary context
CUPARITY_SIM_PROC(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags)
CUPARITY_SIM_PROC(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2)

// context
CUPARITY_SIM_PROC(cuCtxCreate, 2000, cuCtxCreate)
CUPARITY_SIM_PROC(cuCtxCreate, 3020, cuCtxCreate_v2)
CUPARITY_SIM_PROC(cuCtxCreate, 11040, cuCtxCreate_v3)
CUPARITY_SIM_PROC(cuCtxCreate, 12050, cuCtxCreate_v4)
CUPARITY_SIM_PROC(cuCtxDestroy, 2000, cuCtxDestroy)
CUPARITY_SIM_PROC(cuCtxDestroy, 4000, cuCtxDestroy_v2)
CUPARITY_SIM_PROC(cuCtxGetCurrent, 4000, cuCtxGetCurrent)
CUPARITY_SIM_PROC(cuCtxSetCurrent, 4000, cuCtxSetCurrent)
CUPARITY_SIM_PROC(cuCtxPushCurrent, 2000, cuCtxPushCurrent)
CUPARITY_SIM_PROC(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2)
CUPARITY_SIM_PROC(cuCtxPopCurrent, 2000, cuCtxPopCurrent)
CUPARITY_SIM_PROC(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2)
CUPARITY_SIM_PROC(cuCtxGetDevice, 2000, cuCtxGetDevice)
CUPARITY_SIM_PROC(cuCtxGetDevice, 13000, cuCtxGetDevice_v2)
CUPARITY_SIM_PROC(cuCtxSynchronize, 2000, cuCtxSynchronize)
CUPARITY_SIM_PROC(cuCtxSynchronize, 13000, cuCtxSynchronize_v2)
CUPARITY_SIM_PROC(cuCtxEnablePeerAccess, 4000, cuCtxEnablePeerAccess)
CUPARITY_SIM_PROC(cuCtxDisablePeerAccess, 4000, cuCtxDisablePeerAccess)
CUPARITY_SIM_PROC(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange)

// module and function
CUPARITY_SIM_PROC(cuModuleLoadData, 2000, cuModuleLoadData)
CUPARITY_SIM_PROC(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx)
CUPARITY_SIM_PROC(cuModuleUnload, 2000, cuModuleUnload)
CUPARITY_SIM_PROC(cuModuleGetFunction, 2000, cuModuleGetFunction)
CUPARITY_SIM_PROC(cuModuleGetGlobal, 2000, cuModuleGetGlobal)
CUPARITY_SIM_PROC(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2)
CUPARITY_SIM_PROC(cuFuncGetAttribute, 2020, cuFuncGetAttribute)
CUPARITY_SIM_PROC(cuFuncSetAttribute, 9000, cuFuncSetAttribute)
CUPARITY_SIM_PROC(cuFuncSetCacheConfig, 3000, cuFuncSetCacheConfig)

// memory
CUPARITY_SIM_PROC(cuMemAlloc, 2000, cuMemAlloc)
CUPARITY_SIM_PROC(cuMemAlloc, 3020, cuMemAlloc_v2)
CUPARITY_SIM_PROC(cuMemFree, 2000, cuMemFree)
CUPARITY_SIM_PROC(cuMemFree, 3020, cuMemFree_v2)
CUPARITY_SIM_PROC(cuMemAllocManaged, 6000, cuMemAllocManaged)
CUPARITY_SIM_PROC(cuMemGetInfo, 2000, cuMemGetInfo)
CUPARITY_SIM_PROC(cuMemGetInfo, 3020, cuMemGetInfo_v2)
CUPARITY_SIM_PROC(cuMemGetAddressRange, 2000, cuMemGetAddressRange)
CUPARITY_SIM_PROC(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2)
CUPARITY_SIM_PROC(cuMemsetD8, 2000, cuMemsetD8)
CUPARITY_SIM_PROC_PT(cuMemsetD8, 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds)
CUPARITY_SIM_PROC(cuMemsetD32, 2000, cuMemsetD32)
CUPARITY_SIM_PROC_PT(cuMemsetD32, 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds)
CUPARITY_SIM_PROC_PT(cuMemsetD8Async, 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz)
CUPARITY_SIM_PROC(cuMemcpyHtoD, 2000, cuMemcpyHtoD)
CUPARITY_SIM_PROC_PT(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds)
CUPARITY_SIM_PROC(cuMemcpyDtoH, 2000, cuMemcpyDtoH)
CUPARITY_SIM_PROC_PT(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds)
CUPARITY_SIM_PROC(cuMemcpyDtoD, 2000, cuMemcpyDtoD)
CUPARITY_SIM_PROC_PT(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds)
CUPARITY_SIM_PROC(cuMemcpyHtoDAsync, 2000, cuMemcpyHtoDAsync)
CUPARITY_SIM_PROC_PT(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz)
CUPARITY_SIM_PROC(cuMemcpyDtoHAsync, 2000, cuMemcpyDtoHAsync)
CUPARITY_SIM_PROC_PT(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz)
CUPARITY_SIM_PROC(cuMemcpyDtoDAsync, 3000, cuMemcpyDtoDAsync)
CUPARITY_SIM_PROC_PT(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz)
CUPARITY_SIM_PROC(cuMemHostAlloc, 2020, cuMemHostAlloc)
CUPARITY_SIM_PROC(cuMemFreeHost, 2000, cuMemFreeHost)
CUPARITY_SIM_PROC(cuMemHostRegister, 4000, cuMemHostRegister)
CUPARITY_SIM_PROC(cuMemHostRegister, 6050, cuMemHostRegister_v2)
CUPARITY_SIM_PROC(cuMemHostUnregister, 4000, cuMemHostUnregister)
CUPARITY_SIM_PROC(cuMemHostGetDevicePointer, 2020, cuMemHostGetDevicePointer)
CUPARITY_SIM_PROC(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2)
CUPARITY_SIM_PROC(cuMemHostGetFlags, 2030, cuMemHostGetFlags)
CUPARITY_SIM_PROC(cuPointerGetAttribute, 4000, cuPointerGetAttribute)
CUPARITY_SIM_PROC_PT(cuMemAllocAsync, 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz)
CUPARITY_SIM_PROC_PT(cuMemFreeAsync, 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz)
CUPARITY_SIM_PROC_PT(cuMemPrefetchAsync, 8000, cuMemPrefetchAsync, cuMemPrefetchAsync_ptsz)
CUPARITY_SIM_PROC_PT(cuMemPrefetchAsync, 12020, cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz)
CUPARITY_SIM_PROC(cuMemAdvise, 8000, cuMemAdvise)
CUPARITY_SIM_PROC(cuMemAdvise, 12020, cuMemAdvise_v2)

// stream and event
CUPARITY_SIM_PROC(cuStreamCreate, 2000, cuStreamCreate)
CUPARITY_SIM_PROC(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority)
CUPARITY_SIM_PROC(cuStreamDestroy, 2000, cuStreamDestroy)
CUPARITY_SIM_PROC(cuStreamDestroy, 4000, cuStreamDestroy_v2)
CUPARITY_SIM_PROC_PT(cuStreamSynchronize, 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz)
CUPARITY_SIM_PROC_PT(cuStreamQuery, 2000, cuStreamQuery, cuStreamQuery_ptsz)
CUPARITY_SIM_PROC_PT(cuStreamWaitEvent, 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz)
CUPARITY_SIM_PROC_PT(cuStreamAddCallback, 5000, cuStreamAddCallback, cuStreamAddCallback_ptsz)
CUPARITY_SIM_PROC_PT(cuStreamGetPriority, 5050, cuStreamGetPriority, cuStreamGetPriority_ptsz)
CUPARITY_SIM_PROC_PT(cuStreamGetFlags, 5050, cuStreamGetFlags, cuStreamGetFlags_ptsz)
CUPARITY_SIM_PROC_PT(cuLaunchHostFunc, 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz)
CUPARITY_SIM_PROC(cuEventCreate, 2000, cuEventCreate)
CUPARITY_SIM_PROC(cuEventDestroy, 2000, cuEventDestroy)
CUPARITY_SIM_PROC(cuEventDestroy, 4000, cuEventDestroy_v2)
CUPARITY_SIM_PROC_PT(cuEventRecord, 2000, cuEventRecord, cuEventRecord_ptsz)
CUPARITY_SIM_PROC(cuEventQuery, 2000, cuEventQuery)
CUPARITY_SIM_PROC(cuEventSynchronize, 2000, cuEventSynchronize)
CUPARITY_SIM_PROC(cuEventElapsedTime, 2000, cuEventElapsedTime)
CUPARITY_SIM_PROC(cuEventElapsedTime, 12080, cuEventElapsedTime_v2)

// launch
CUPARITY_SIM_PROC_PT(cuLaunchKernel, 4000, cuLaunchKernel, cuLaunchKernel_ptsz)
CUPARITY_SIM_PROC_PT(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel,
                     cuLaunchCooperativeKernel_ptsz)

// linker
CUPARITY_SIM_PROC(cuLinkCreate, 5050, cuLinkCreate)
CUPARITY_SIM_PROC(cuLinkCreate, 6050, cuLinkCreate_v2)
CUPARITY_SIM_PROC(cuLinkAddData, 5050, cuLinkAddData)
CUPARITY_SIM_PROC(cuLinkAddData, 6050, cuLinkAddData_v2)
CUPARITY_SIM_PROC(cuLinkAddFile, 5050, cuLinkAddFile)
CUPARITY_SIM_PROC(cuLinkAddFile, 6050, cuLinkAddFile_v2)
CUPARITY_SIM_PROC(cuLinkComplete, 5050, cuLinkComplete)
CUPARITY_SIM_PROC(cuLinkDestroy, 5050, cuLinkDestroy)

// occupancy
CUPARITY_SIM_PROC(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050,
                  cuOccupancyMaxActiveBlocksPerMultiprocessor)
CUPARITY_SIM_PROC(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000,
                  cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)
CUPARITY_SIM_PROC(cuOccupancyMaxPotentialBlockSize, 6050, cuOccupancyMaxPotentialBlockSize)
CUPARITY_SIM_PROC(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000,
                  cuOccupancyMaxPotentialBlockSizeWithFlags)

// IPC
CUPARITY_SIM_PROC(cuIpcGetMemHandle, 4010, cuIpcGetMemHandle)
CUPARITY_SIM_PROC(cuIpcOpenMemHandle, 4010, cuIpcOpenMemHandle)
CUPARITY_SIM_PROC(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2)
CUPARITY_SIM_PROC(cuIpcCloseMemHandle, 4010, cuIpcCloseMemHandle)
CUPARITY_SIM_PROC(cuIpcGetEventHandle, 4010, cuIpcGetEventHandle)
CUPARITY_SIM_PROC(cuIpcOpenEventHandle, 4010, cuIpcOpenEventHandle)

// profiler
CUPARITY_SIM_PROC(cuProfilerStart, 4000, cuProfilerStart)
CUPARITY_SIM_PROC(cuProfilerStop, 4000, cuProfilerStop)
