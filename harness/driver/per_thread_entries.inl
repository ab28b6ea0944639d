// Entries with a per-thread-default-stream variant: CUPARITY_PER_THREAD(base, version, suffix).
//
// `version` is the cuGetProcAddress version from which the _ptds/_ptsz symbol exists (cudaTypedefs.h
// PFN_<base>_v<version>_<suffix>). Asking cuGetProcAddress_v2 for a per-thread entry with the
// PER_THREAD_DEFAULT_STREAM flag at an older version returns no pointer and
// CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT (seen on driver 580.159.04, H200: e.g.
// cuMemcpyHtoD at 3020), so the nvidia backend and the audit ask at this version in PTDS mode,
// as cuda-python's Gen A loader did (docs/driver-facts.md#per-thread-version). entry_table.cpp
// static_asserts that the per-thread PFN has the same type as the entry's.
//
// No include guard: an X-macro list.
CUPARITY_PER_THREAD(cuMemsetD8, 7000, ptds)
CUPARITY_PER_THREAD(cuMemsetD32, 7000, ptds)
CUPARITY_PER_THREAD(cuMemsetD8Async, 7000, ptsz)
CUPARITY_PER_THREAD(cuMemcpyHtoD, 7000, ptds)
CUPARITY_PER_THREAD(cuMemcpyDtoH, 7000, ptds)
CUPARITY_PER_THREAD(cuMemcpyDtoD, 7000, ptds)
CUPARITY_PER_THREAD(cuMemcpyHtoDAsync, 7000, ptsz)
CUPARITY_PER_THREAD(cuMemcpyDtoHAsync, 7000, ptsz)
CUPARITY_PER_THREAD(cuMemcpyDtoDAsync, 7000, ptsz)
CUPARITY_PER_THREAD(cuMemAllocAsync, 11020, ptsz)
CUPARITY_PER_THREAD(cuMemFreeAsync, 11020, ptsz)
CUPARITY_PER_THREAD(cuMemPrefetchAsync, 12020, ptsz)
CUPARITY_PER_THREAD(cuStreamSynchronize, 7000, ptsz)
CUPARITY_PER_THREAD(cuStreamQuery, 7000, ptsz)
CUPARITY_PER_THREAD(cuStreamWaitEvent, 7000, ptsz)
CUPARITY_PER_THREAD(cuStreamAddCallback, 7000, ptsz)
CUPARITY_PER_THREAD(cuStreamGetPriority, 7000, ptsz)
CUPARITY_PER_THREAD(cuStreamGetFlags, 7000, ptsz)
CUPARITY_PER_THREAD(cuLaunchHostFunc, 10000, ptsz)
CUPARITY_PER_THREAD(cuEventRecord, 7000, ptsz)
CUPARITY_PER_THREAD(cuLaunchKernel, 7000, ptsz)
CUPARITY_PER_THREAD(cuLaunchCooperativeKernel, 9000, ptsz)
