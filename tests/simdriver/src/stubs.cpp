// The driver functions the simulated driver does not implement: exported, and each answers
// CUDA_ERROR_NOT_SUPPORTED (generated from the whole driver API: simdriver/api_stubs.inl).
//
// No cuda.h here: a stub is defined as `int name()`, which would clash with cuda.h's prototype of
// the same name. A caller passes its arguments by the C calling convention and gets the result in
// the register a CUresult would use. Each stub is its own function (the library is built with
// -fno-ipa-icf, so identical bodies are not folded): dladdr must name the symbol bound.

#define CUPARITY_SIM_VISIBLE __attribute__((visibility("default")))
#define CUPARITY_SIM_HIDDEN

namespace {
constexpr int not_supported = 801; // CUDA_ERROR_NOT_SUPPORTED
} // namespace

#define CUPARITY_SIM_STUB_FUNCTION(index, symbol, visibility)                                      \
  extern "C" visibility int symbol() {                                                             \
    return not_supported;                                                                          \
  }
#include "simdriver/api_stubs.inl"
#undef CUPARITY_SIM_STUB_FUNCTION

namespace cuparity::sim {

// By index, as simdriver/api_proc_table.inl's CUPARITY_SIM_STUB(index) names them.
extern void *const stub_addresses[];
void *const stub_addresses[] = {
#define CUPARITY_SIM_STUB_FUNCTION(index, symbol, visibility) reinterpret_cast<void *>(&symbol),
#include "simdriver/api_stubs.inl"
#undef CUPARITY_SIM_STUB_FUNCTION
    nullptr, // the table may have no stub at all
};

} // namespace cuparity::sim
