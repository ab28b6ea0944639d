// The shim's exports: each name of harness/driver/exported_symbols.inl is its dlsym-path wrapper.
#include "tools/fault_shim/forwarding.hpp"
#include "tools/faults/driver_declarations.hpp"

namespace cuparity::shim {

const std::array<wrapper_pair, faults::symbol_count> g_wrappers = {{
#define CUPARITY_EXPORTED_SYMBOL(sym)                                                              \
  {reinterpret_cast<void *>(wrapper_of<symbol_id::sym, call_path::dlsym, decltype(::sym)>),        \
   reinterpret_cast<void *>(wrapper_of<symbol_id::sym, call_path::proc, decltype(::sym)>)},
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
}};

namespace {

// C++ cannot define a function named `cuInit` from a type alone, and the wrappers are templates.
// So each exported name is made an assembler alias of its wrapper: GCC prints the wrapper's
// assembler name for %c0, `.set` gives the exported name the same address, and `.globl` with the
// version script exports it. dlsym and dladdr then see the exported name at the wrapper's
// address, as with a function defined under that name. (ELF and the GNU assembler only.)
[[gnu::used]] void define_exported_names() {
#define CUPARITY_EXPORTED_SYMBOL(sym)                                                              \
  asm(".globl " #sym "\n\t.type " #sym ", @function\n\t.set " #sym                                 \
      ", %c0" ::"i"(wrapper_of<symbol_id::sym, call_path::dlsym, decltype(::sym)>));
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
}

} // namespace

} // namespace cuparity::shim
