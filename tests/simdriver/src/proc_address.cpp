// The exported functions and their twins, and cuGetProcAddress{,_v2} (driver entry points): every
// function of the whole driver API resolves, the ones not implemented to their stubs (stubs.cpp).
#include "api.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

// The hidden twins (api.hpp) have exactly the exported functions' types.
namespace cuparity::sim::twin {
#define CUPARITY_EXPORTED_SYMBOL(sym) decltype(::sym) sym;
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
} // namespace cuparity::sim::twin

namespace cuparity::sim {

extern void *const stub_addresses[]; // stubs.cpp

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

// A symbol of the whole driver API: an implemented one (its symbol_id), or a stub (stubs.cpp).
struct symbol_ref {
  int id = -1;   // symbol_id as int, or -1
  int stub = -1; // index into stub_addresses, or -1
  [[nodiscard]] constexpr bool exists() const { return id >= 0 || stub >= 0; }
};

// Every ABI of every function of the whole driver API (cmake/api_headers.py), sorted by base
// name then ABI version.
struct proc_row {
  std::string_view base;
  int abi;
  symbol_ref symbol;
  int pt_version;       // from which version the per-thread variant exists; 0: none
  symbol_ref pt_symbol; // its _ptds/_ptsz symbol
};

constexpr symbol_ref implemented(symbol_id id) {
  return {static_cast<int>(id), -1};
}
constexpr symbol_ref stub(int index) {
  return {-1, index};
}
#define CUPARITY_SIM_IMPL(sym) implemented(symbol_id::sym)
#define CUPARITY_SIM_STUB(index) stub(index)
#define CUPARITY_SIM_NONE                                                                          \
  symbol_ref {}
constexpr proc_row proc_table[] = {
#define CUPARITY_SIM_API_PROC(base, abi, sym, pt_version, pt_sym)                                  \
  {#base, abi, sym, pt_version, pt_sym},
#include "simdriver/api_proc_table.inl"
#undef CUPARITY_SIM_API_PROC
};
#undef CUPARITY_SIM_IMPL
#undef CUPARITY_SIM_STUB
#undef CUPARITY_SIM_NONE

constexpr bool row_before(const proc_row &a, const proc_row &b) {
  return a.base < b.base || (a.base == b.base && a.abi < b.abi);
}
static_assert(std::is_sorted(std::begin(proc_table), std::end(proc_table), row_before),
              "api_proc_table.inl must be sorted by base name, then ABI (binary search)");

// The address handed out for a symbol: its twin while the symbol has a `dlsym` or `proc` fault,
// else the exported function. So `proc` faults fire only for callers that came through here,
// `dlsym` ones only for callers of the export, and a symbol without path-specific faults binds
// one address on both paths (fault_set::needs_twin; the fault shim uses the same rule).
void *address_of(int id) {
  const auto sid = static_cast<symbol_id>(id);
  return cfg().faults.needs_twin(sid) ? symbol_table[id].twin : symbol_table[id].exported;
}

// A function the simulated driver does not implement has no twin and no faults: its stub.
void *address_of(symbol_ref ref) {
  return ref.id >= 0 ? address_of(ref.id) : stub_addresses[ref.stub];
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
  const std::string_view base(symbol);
  const auto [first, last] =
      std::equal_range(std::begin(proc_table), std::end(proc_table), proc_row{base, 0, {}, 0, {}},
                       [](const proc_row &a, const proc_row &b) { return a.base < b.base; });
  if (first == last)
    return report(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  const proc_row *best = nullptr;
  for (const proc_row *row = first; row != last && row->abi <= version; ++row)
    best = row;
  if (best == nullptr)
    return report(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (per_thread && best->pt_symbol.exists()) {
    // The _ptds/_ptsz symbols exist from their own version (PFN_*_v7000_ptds, at the earliest).
    // Asking with the per-thread flag at an older version gives no pointer and
    // VERSION_NOT_SUFFICIENT: seen on driver 580.159.04 (H200), e.g. cuMemcpyHtoD at 3020 and
    // cuEventRecord at 2000.
    if (version < best->pt_version)
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
