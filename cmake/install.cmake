# What `cmake --install` puts under the prefix (Debian layout, FHS):
#
#   bin/cuparity                         the executable
#   lib/cuparity/libcuparity_nvidia.so   the nvidia backend: a private plugin, dlopen'ed at run time
#   lib/cuparity/libcuparity_audit.so    the LD_AUDIT library `cuparity capture` puts in front of a
#                                        command (docs/capture.md)
#   lib/cuparity/python/cuparity_pytest.py the pytest plugin of external suites' processes
#                                        (Debian Policy 10.2: private shared objects go in a
#                                        subdirectory of /usr/lib, not executable, stripped)
#   lib/cuparity/python-hook/            the start-up hook `cuparity capture` puts first on a
#                                        command's PYTHONPATH (sitecustomize.py, cuparity_capture.py)
#   share/cuparity/matrices/             the shipped matrices, with baselines/ and the Python files
#                                        their suites and programs run
#   share/doc/cuparity/                  README.md and docs/
#
# and, component `development` (cuparity as a library: docs/install.md, "Your own cases and probes"):
#
#   include/cuparity/harness/...         every exported layer's headers, at their repository paths
#   include/cuparity/backends/internal/  (so "harness/framework/case_registry.hpp" works as in-tree)
#   include/cuparity/cases/kernels/
#   lib/libcuparity_<layer>.a            the layers as static libraries, cuparity_cli among them:
#                                        the whole runner, main() included
#   lib/cmake/cuparity/                  cuparity-config.cmake (+ version, targets):
#                                        find_package(cuparity) gives cuparity::main and
#                                        cuparity::harness; cuparity_installed_libraries.cpp,
#                                        which the config compiles into every executable linking
#                                        cuparity::main, so that it finds lib/cuparity/ above;
#                                        kernels.cmake (cuparity_add_kernels: a project's own
#                                        device code, registered in the kernel registry)
#
# The executable looks for its libraries beside itself first (the build tree, and the folder carried
# to the GPU machine), then in lib/cuparity relative to its own folder (companion_library in
# harness/config/config.cpp), so an installed tree needs no environment variable. A user's
# executable linking cuparity::main looks there too, then in the prefix's lib/cuparity, which
# cuparity-config.cmake computes from where it is found (so a moved prefix still works once the
# user's project is configured again) and compiles into it.
#
# Component `cuparity` is the package; component `development` is installed by a plain install
# too, but not packaged (the DEB is the runner alone). Component `simdriver` (the simulated
# driver, a test artefact) is excluded from a plain install and from the DEB; the install tests
# ask for it with `cmake --install <build> --component simdriver`. Component `fault_shim`
# (lib/cuparity/libcuparity_fault_shim.so, docs/fault-shim.md) likewise: a tool for putting faults
# in front of a real driver, which no plain install should carry where a driver could be expected.
include(GNUInstallDirs)

set(CUPARITY_INSTALL_PKGLIBDIR "lib/cuparity" CACHE STRING
    "Folder, relative to the prefix, of the libraries cuparity loads at run time")
foreach(dir CMAKE_INSTALL_BINDIR CUPARITY_INSTALL_PKGLIBDIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(FATAL_ERROR "${dir}=${${dir}}: must be relative to the prefix, because the "
                        "executable finds its libraries relative to its own folder")
  endif()
endforeach()
# The one place the executable learns the layout (harness/config/config.cpp has the same default).
file(RELATIVE_PATH cuparity_pkglibdir_from_bindir "/prefix/${CMAKE_INSTALL_BINDIR}"
     "/prefix/${CUPARITY_INSTALL_PKGLIBDIR}")
file(RELATIVE_PATH cuparity_matrices_from_bindir "/prefix/${CMAKE_INSTALL_BINDIR}"
     "/prefix/${CMAKE_INSTALL_DATADIR}/cuparity/matrices")
target_compile_definitions(cuparity_config PRIVATE
  CUPARITY_PKGLIBDIR_FROM_BINDIR="${cuparity_pkglibdir_from_bindir}"
  CUPARITY_MATRICES_FROM_BINDIR="${cuparity_matrices_from_bindir}")

# Installed binaries carry no RUNPATH: they link only system libraries (libc, libstdc++,
# libgcc_s), and Debian rejects custom search paths. The build tree keeps its $ORIGIN
# (CMAKE_BUILD_RPATH). A dependency found outside the system folders is still recorded, by
# absolute path.
set(cuparity_installed_targets cuparity cuparity_nvidia cuparity_audit cuparity_fault_shim)
if(TARGET cuparity_simdriver)
  list(APPEND cuparity_installed_targets cuparity_simdriver cuparity_simdriver_legacy)
endif()
set_target_properties(${cuparity_installed_targets} PROPERTIES
  INSTALL_RPATH "" INSTALL_RPATH_USE_LINK_PATH ON)

set(cuparity_library_permissions OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

install(TARGETS cuparity RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cuparity)
install(TARGETS cuparity_nvidia cuparity_audit LIBRARY DESTINATION ${CUPARITY_INSTALL_PKGLIBDIR}
        PERMISSIONS ${cuparity_library_permissions} COMPONENT cuparity)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/matrices/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/cuparity/matrices COMPONENT cuparity
        FILES_MATCHING PATTERN "*.toml" PATTERN "*.txt" PATTERN "*.py" PATTERN "*.ini"
        PATTERN "wheels" EXCLUDE PATTERN "__pycache__" EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cuparity)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        COMPONENT cuparity FILES_MATCHING PATTERN "*.md")

if(TARGET cuparity_simdriver)
  # Both models: `--driver sim` opens the current one; the legacy one serves as a second driver
  # (e.g. an axis of driver-validation.toml).
  install(TARGETS cuparity_simdriver cuparity_simdriver_legacy
          LIBRARY DESTINATION ${CUPARITY_INSTALL_PKGLIBDIR}
          PERMISSIONS ${cuparity_library_permissions} COMPONENT simdriver EXCLUDE_FROM_ALL)
endif()

# The pytest plugin a suite matrix's processes load (harness/external/suite_process.cpp finds it as a
# companion file: python/ beside the executable, else lib/cuparity/python).
install(FILES ${CMAKE_SOURCE_DIR}/tools/suite/cuparity_pytest.py
              ${CMAKE_SOURCE_DIR}/tools/pyprobe/cuparity_pyprobe.py
        DESTINATION ${CUPARITY_INSTALL_PKGLIBDIR}/python COMPONENT cuparity)
# The Python start-up hook of `cuparity capture` (harness/cli/capture_command.cpp finds it as a
# companion folder: python-hook/ beside the executable, else lib/cuparity/python-hook).
install(FILES ${CMAKE_SOURCE_DIR}/tools/capture/python_hook/sitecustomize.py
              ${CMAKE_SOURCE_DIR}/tools/capture/cuparity_capture.py
        DESTINATION ${CUPARITY_INSTALL_PKGLIBDIR}/python-hook COMPONENT cuparity)
install(TARGETS cuparity_fault_shim LIBRARY DESTINATION ${CUPARITY_INSTALL_PKGLIBDIR}
        PERMISSIONS ${cuparity_library_permissions} COMPONENT fault_shim EXCLUDE_FROM_ALL)

# The development files need every dependency installed where the user's find_package finds it: a
# fetched one (cmake/dependencies.cmake) is not. (A Python wheel installs only the runner's
# components: pyproject.toml's install.components.)
get_property(cuparity_fetched GLOBAL PROPERTY CUPARITY_FETCHED_DEPENDENCIES)
if(cuparity_fetched)
  if(cuparity_fetched)
    message(STATUS "No development files in the install: fetched ${cuparity_fetched}")
  endif()
  return()
endif()

# ---- the development files: every layer but the project's own cases, as static libraries with
# their headers, and the CMake package. An exported target's dependencies must be exported with
# it, so the export set is the whole closure under cuparity_cli (cuparity::main).
set(CUPARITY_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/cuparity")
get_property(cuparity_layers GLOBAL PROPERTY CUPARITY_LAYERS)
list(REMOVE_ITEM cuparity_layers cases kernels)
set(cuparity_exported cuparity_harness)
foreach(layer IN LISTS cuparity_layers)
  list(APPEND cuparity_exported cuparity_${layer})
  get_target_property(folder cuparity_${layer} CUPARITY_FOLDER)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${folder}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuparity/${folder} COMPONENT development
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.inl")
endforeach()
# The generated entry tables (cmake/entry_tables.cmake) sit beside the driver layer's headers.
install(DIRECTORY ${CUPARITY_ENTRY_TABLES}/include/harness/driver/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuparity/harness/driver COMPONENT development
        FILES_MATCHING PATTERN "*.inl")
install(TARGETS ${cuparity_exported} EXPORT cuparity-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(EXPORT cuparity-targets NAMESPACE cuparity:: DESTINATION ${CUPARITY_INSTALL_CMAKEDIR}
        COMPONENT development)

include(CMakePackageConfigHelpers)
# The toolkit whose cuda.h the layers were compiled against: where the config looks first.
get_filename_component(CUPARITY_BUILT_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/cuparity-config.cmake.in
  ${CMAKE_BINARY_DIR}/cuparity-config.cmake INSTALL_DESTINATION ${CUPARITY_INSTALL_CMAKEDIR}
  PATH_VARS CUPARITY_INSTALL_PKGLIBDIR)
# 0.x: a minor release may change what a case sees.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cuparity-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cuparity-config.cmake
              ${CMAKE_BINARY_DIR}/cuparity-config-version.cmake
              ${CMAKE_SOURCE_DIR}/cmake/cuparity_installed_libraries.cpp
              ${CMAKE_SOURCE_DIR}/cmake/kernels.cmake ${CMAKE_SOURCE_DIR}/cmake/embed_kernels.cmake
        DESTINATION ${CUPARITY_INSTALL_CMAKEDIR} COMPONENT development)
