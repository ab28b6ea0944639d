// cuGetProcAddress through the shim: the real driver's answer, exchanged for the shim's wrapper.
#pragma once

#include <cstdint>

namespace cuparity::shim {

/// After a successful real cuGetProcAddress{,_v2}(requested, pfn, version, flags): when *pfn is
/// the real address of a symbol the shim wraps, replaces it with the shim's proc twin when the
/// symbol has a `dlsym` or `proc` fault, else with its exported wrapper (no fault, or only `any`
/// faults: both paths then bind the same address, and the binding audit matches). Any other
/// answer is left as the driver gave it.
void rewrite_answer(const char *requested, std::uint64_t flags, void **pfn);

} // namespace cuparity::shim
