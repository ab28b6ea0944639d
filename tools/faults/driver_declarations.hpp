// cuda.h's declaration of every exported driver symbol, for a library that defines them (the
// simulated driver, the fault shim): include it before anything else that includes cuda.h.
#pragma once

// The real driver is built with __CUDA_API_VERSION_INTERNAL: cuda.h then declares every versioned
// symbol (bare 1-ABI names, _v2, _ptds, _ptsz) with its exact signature instead of renaming the
// base names, so `decltype(::cuMemcpyDtoH_v2)` is that symbol's type and a definition is checked
// against NVIDIA's declaration.
#define __CUDA_API_VERSION_INTERNAL 1
// Everything cuda.h declares is part of the exported API; the rest of such a library stays hidden
// (-fvisibility=hidden), and a linker version script trims the export list further.
#pragma GCC visibility push(default)
#include <cuda.h>
#include <cudaProfiler.h>
#pragma GCC visibility pop

#include <type_traits>

// Every name of the list is a function cuda.h declares (a typo or a symbol of another header
// fails here, not as a missing export at run time).
#define CUPARITY_EXPORTED_SYMBOL(sym)                                                              \
  static_assert(std::is_function_v<decltype(::sym)>, #sym " is not a cuda.h function");
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
