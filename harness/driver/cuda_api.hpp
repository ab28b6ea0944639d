// The CUDA Driver API types and PFN typedefs, without cuda.h's renaming macros.
#pragma once

// cuda.h normally #defines base names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2). The
// driver's own build defines __CUDA_API_VERSION_INTERNAL to switch that off; we do the same so the
// entry table can use plain base names as identifiers. We never call the declared functions (no
// target links libcuda); only the types and the PFN_* typedefs are used.
#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
