// The exported functions and their twins, and cuGetProcAddress{,_v2} (driver entry points).
#include "api.hpp"

#include <cstring>

// The hidden twins (api.hpp) have exactly the exported functions' types.
namespace cuparity::sim::twin {
#define CUPARITY_EXPORTED_SYMBOL(sym) decltype(::sym) sym;
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
} // namespace cuparity::sim::twin

namespace cuparity::sim {

namespace {

struct symbol_entry {
  void *exported;
  void *twin;
};

const symbol_entry symbol_table[] = {
#define CUPARITY_EXPORTED_SYMBOL(sym)                                                              \
  {reinterpret_cast<void *>(&::sym), reinterpret_cast<void *>(&twin::sym)},
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
};
static_assert(std::size(symbol_table) == symbol_count);

constexpr int no_symbol = -1;

struct proc_row {
  const char *base;
  int abi;
  int symbol;    // symbol_id as int
  int pt_symbol; // per-thread variant, or no_symbol
};

const proc_row proc_table[] = {
#define CUPARITY_SIM_PROC(base, abi, sym) {#base, abi, static_cast<int>(symbol_id::sym), no_symbol},
#define CUPARITY_SIM_PROC_PT(base, abi, sym, ptsym)                                                \
  {#base, abi, static_cast<int>(symbol_id::sym), static_cast<int>(symbol_id::ptsym)},
#include "simdriver/proc_table.inl"
#undef CUPARITY_SIM_PROC
#undef CUPARITY_SIM_PROC_PT
};

// The address handed out for a symbol: its twin while the symbol has a `dlsym` or `proc` fault,
// else the exported function. So `proc` faults fire only for callers that came through here,
// `dlsym` ones only for callers of the export, and a symbol without path-specific faults binds
// one address on both paths (fault_set::needs_twin; the fault shim uses the same rule).
void *address_of(int id) {
  const auto sid = static_cast<symbol_id>(id);
  return cfg().faults.needs_twin(sid) ? symbol_table[id].twin : symbol_table[id].exported;
}

CUresult get_proc_address(const char *symbol, void **pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult *status) {
  if (symbol == nullptr || pfn == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  constexpr cuuint64_t known_flags =
      CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if ((flags & ~known_flags) != 0 || flags == known_flags)
    return CUDA_ERROR_INVALID_VALUE;
  if (version > cfg().driver_version)
    return CUDA_ERROR_INVALID_VALUE;
  auto report = [&](CUdriverProcAddressQueryResult r) {
    if (status != nullptr)
      *status = r;
    return CUDA_SUCCESS;
  };
  if (cfg().hidden.contains(std::string_view(symbol)))
    return report(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  const proc_row *best = nullptr;
  bool known = false;
  for (const proc_row &row : proc_table) {
    if (std::strcmp(row.base, symbol) != 0)
      continue;
    known = true;
    if (row.abi <= version && (best == nullptr || row.abi > best->abi))
      best = &row;
  }
  if (!known)
    return report(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  if (best == nullptr)
    return report(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (per_thread && best->pt_symbol != no_symbol) {
    // The _ptds/_ptsz symbols exist from CUDA 7.0 (PFN_*_v7000_ptds). Asking with the per-thread
    // flag at an older version gives no pointer and VERSION_NOT_SUFFICIENT: seen on driver
    // 580.159.04 (H200), e.g. cuMemcpyHtoD at 3020 and cuEventRecord at 2000.
    if (version < std::max(best->abi, 7000))
      return report(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    *pfn = address_of(best->pt_symbol);
    return report(CU_GET_PROC_ADDRESS_SUCCESS);
  }
  *pfn = address_of(best->symbol);
  return report(CU_GET_PROC_ADDRESS_SUCCESS);
}

} // namespace

} // namespace cuparity::sim

using namespace cuparity::sim;

// Neither form needs cuInit (the real driver answers before initialisation too).
CUPARITY_SIM_API(cuGetProcAddress_v2,
                 (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                  CUdriverProcAddressQueryResult *symbolStatus),
                 (symbol, pfn, cudaVersion, flags, symbolStatus), (void)0) {
  return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUPARITY_SIM_API(cuGetProcAddress,
                 (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags),
                 (symbol, pfn, cudaVersion, flags), (void)0) {
  return get_proc_address(symbol, pfn, cudaVersion, flags, nullptr);
}
