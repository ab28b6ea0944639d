// Compiled into every executable that links the installed cuparity::main: where the prefix keeps
// the libraries loaded at run time (the nvidia backend, the simulated driver, the audit library).
// Such an executable sits in its user's build folder, where neither of the two places beside it
// that companion_library looks at has them. Installed by cmake/install.cmake; the path comes from
// cuparity-config.cmake, computed from wherever the prefix is when find_package runs.
#include "harness/config/config.hpp"

#ifndef CUPARITY_INSTALLED_PKGLIBDIR
#error "CUPARITY_INSTALLED_PKGLIBDIR comes from cuparity-config.cmake: use find_package(cuparity)"
#endif

namespace {
const cuparity::companion_folder_registrar cuparity_installed_pkglibdir_registrar{
    CUPARITY_INSTALLED_PKGLIBDIR};
} // namespace
