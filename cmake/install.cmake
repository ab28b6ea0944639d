# What `cmake --install` puts under the prefix (Debian layout, FHS):
#
#   bin/cuparity                         the executable
#   lib/cuparity/libcuparity_nvidia.so   the nvidia backend: a private plugin, dlopen'ed at run time
#   lib/cuparity/libcuparity_audit.so    the LD_AUDIT library `cuparity capture` puts in front of a
#                                        command (docs/capture.md)
#                                        (Debian Policy 10.2: private shared objects go in a
#                                        subdirectory of /usr/lib, not executable, stripped)
#   share/cuparity/matrices/             the shipped matrices, with baselines/
#   share/doc/cuparity/                  README.md and docs/
#
# The executable looks for its libraries beside itself first (the build tree, and the folder carried
# to the GPU machine), then in lib/cuparity relative to its own folder (companion_library in
# harness/config/config.cpp), so an installed tree needs no environment variable.
#
# Component `cuparity` is the package. Component `simdriver` (the simulated driver, a test
# artefact) is excluded from a plain install and from the DEB; the install test asks for it with
# `cmake --install <build> --component simdriver`. Component `fault_shim`
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
target_compile_definitions(cuparity_config PRIVATE
  CUPARITY_PKGLIBDIR_FROM_BINDIR="${cuparity_pkglibdir_from_bindir}")

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
        FILES_MATCHING PATTERN "*.toml" PATTERN "*.txt")
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

install(TARGETS cuparity_fault_shim LIBRARY DESTINATION ${CUPARITY_INSTALL_PKGLIBDIR}
        PERMISSIONS ${cuparity_library_permissions} COMPONENT fault_shim EXCLUDE_FROM_ALL)
