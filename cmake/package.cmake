# The Debian package: `cpack -G DEB` in the build folder writes cuparity_<version>_<arch>.deb with
# component `cuparity` only (cmake/install.cmake; the simulated driver stays out).
set(CUPARITY_PACKAGE_MAINTAINER
    "Seed 1bef67c4 maintainers <maintainers@users.noreply.a-seed-1bef67c4.example>"
    CACHE STRING "Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cuparity)
set(CPACK_PACKAGE_VENDOR "cuparity")
set(CPACK_PACKAGE_CONTACT "${CUPARITY_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "conformance and performance harness for two CUDA Driver API binding paths")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL cuparity)
# One package, however many components are listed.
set(CPACK_DEB_COMPONENT_INSTALL OFF)
# Debian Policy 10.2: binaries and private shared objects are stripped.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CUPARITY_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The extended description; CPack puts the summary above it as the synopsis line.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "cuparity proves that two ways of binding to the CUDA Driver API (Numba's internal
dlopen-and-probe path, and cuda-python's cuGetProcAddress_v2 path) behave the same,
and measures what each costs. It runs identical case suites under every environment
combination of a TOML matrix, one fresh process per cell, and reports whether the
backends are equivalent. The CUDA driver (libcuda.so.1) is opened at run time.")

# dpkg-shlibdeps (package dpkg-dev) computes Depends from the ELF files; without it, the
# dependencies it gives for a bookworm build are written out. No shipped binary links Google
# Benchmark (the latency probes time themselves in interleaved blocks; docs/latency.md).
find_program(CUPARITY_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(CUPARITY_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 11)")
endif()

include(CPack)
