// Older ABIs of entries whose C signature is the entry's own: a process may bind one of these
// (cuBLASLt, in PyTorch and JAX processes, dlsyms the bare `cuCtxPushCurrent`, the CUDA 2.0 ABI,
// where cuda.h names `cuCtxPushCurrent_v2`), and the map backend then runs the cases through it,
// so its outcomes are judged beside the current ABI's (docs/capture.md, "Running the suites
// through a captured process"; docs/driver-facts.md#push-current-v1).
//
// CUPARITY_OLDER_ABI(base_name, older_version, entry_abi_version)
//   The older ABI's symbol is the base name itself (every entry below calls a `_v2` symbol).
//   older_abis.cpp static_asserts PFN_<base>_v<older> == PFN_<base>_v<entry_abi> from
//   cudaTypedefs.h (the older typedefs sit behind __CUDA_API_VERSION_INTERNAL), and that
//   entry_abi_version is the entry's in entries.inl. ABIs whose signature differs (cuMemAlloc's
//   2000 takes `unsigned int`) are not listed: a call through them would be undefined.
//
// No include guard: included several times with different definitions.
CUPARITY_OLDER_ABI(cuDeviceGetUuid, 9020, 11040)
CUPARITY_OLDER_ABI(cuDevicePrimaryCtxRelease, 7000, 11000)
CUPARITY_OLDER_ABI(cuDevicePrimaryCtxReset, 7000, 11000)
CUPARITY_OLDER_ABI(cuDevicePrimaryCtxSetFlags, 7000, 11000)
CUPARITY_OLDER_ABI(cuCtxCreate, 2000, 3020)
CUPARITY_OLDER_ABI(cuCtxDestroy, 2000, 4000)
CUPARITY_OLDER_ABI(cuCtxPushCurrent, 2000, 4000)
CUPARITY_OLDER_ABI(cuCtxPopCurrent, 2000, 4000)
CUPARITY_OLDER_ABI(cuMemHostRegister, 4000, 6050)
CUPARITY_OLDER_ABI(cuStreamDestroy, 2000, 4000)
CUPARITY_OLDER_ABI(cuEventDestroy, 2000, 4000)
CUPARITY_OLDER_ABI(cuEventElapsedTime, 2000, 12080)
CUPARITY_OLDER_ABI(cuLinkCreate, 5050, 6050)
CUPARITY_OLDER_ABI(cuLinkAddData, 5050, 6050)
CUPARITY_OLDER_ABI(cuLinkAddFile, 5050, 6050)
CUPARITY_OLDER_ABI(cuIpcOpenMemHandle, 4010, 11000)
