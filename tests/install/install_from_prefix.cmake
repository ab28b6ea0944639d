# The installed tree works on its own: install the build (plus the simdriver and fault_shim
# components) into a fresh prefix, then, from a folder outside the source and build trees and with
# no library path or binding variable inherited, run the installed executable: `list`,
# `env --json` (the nvidia backend must come from the prefix, without fallback; then through the
# installed fault shim) and the installed smoke matrix on the simulated driver (verdict
# equivalent). Nothing is copied from the source tree, and no path of the source or build tree may
# appear in a RUNPATH or in what the installed executable reports.
#
#   cmake -DBUILD_DIR=<build> -DSOURCE_DIR=<source> [-DREADELF=<readelf>] -P install_from_prefix.cmake
include(${CMAKE_CURRENT_LIST_DIR}/install_support.cmake)
if(NOT READELF)
  find_program(READELF readelf REQUIRED)
endif()

fresh_temporary_folder(tmp install)
set(prefix "${tmp}/prefix")
set(work "${tmp}/work")
file(MAKE_DIRECTORY "${prefix}" "${work}")
clear_inherited_environment()
# The package's files, then the simulated driver and the fault shim (components).
install_build("${prefix}" simdriver fault_shim)

set(exe "${prefix}/bin/cuparity")
set(pkglib "${prefix}/lib/cuparity")
foreach(f bin/cuparity lib/cuparity/libcuparity_nvidia.so lib/cuparity/libcuparity_simdriver.so
          lib/cuparity/libcuparity_fault_shim.so share/cuparity/matrices/smoke.toml share/cuparity/matrices/default.toml
          share/cuparity/matrices/baselines/driver-validation.txt share/doc/cuparity/README.md)
  if(NOT EXISTS "${prefix}/${f}")
    fail("${f} is missing from the installed tree")
  endif()
endforeach()
file(GLOB in_bin RELATIVE "${prefix}/bin" "${prefix}/bin/*")
if(NOT in_bin STREQUAL "cuparity")
  fail("bin/ must hold the executable only, not: ${in_bin}")
endif()

# Every installed file is a plain file of the prefix (no link back into a tree), and every ELF
# file has no RUNPATH/RPATH naming the source or build tree.
file(GLOB_RECURSE installed LIST_DIRECTORIES false "${prefix}/*")
foreach(f IN LISTS installed)
  if(IS_SYMLINK "${f}")
    fail("${f} is a symbolic link")
  endif()
  file(READ "${f}" magic LIMIT 4 HEX)
  if(magic STREQUAL "7f454c46")
    execute_process(COMMAND "${READELF}" -d "${f}" RESULT_VARIABLE rc OUTPUT_VARIABLE dyn
                    ERROR_VARIABLE dyn)
    if(NOT rc EQUAL 0)
      fail("readelf -d ${f} failed (${rc}): ${dyn}")
    endif()
    string(REGEX MATCHALL "\\((RUNPATH|RPATH)\\)[^\n]*" paths "${dyn}")
    foreach(p IN LISTS paths)
      foreach(root "${SOURCE_DIR}" "${BUILD_DIR}")
        string(FIND "${p}" "${root}" at)
        if(at GREATER -1)
          fail("${f} searches the tree ${root}: ${p}")
        endif()
      endforeach()
    endforeach()
    message(STATUS "${f}: ${paths}")
  endif()
endforeach()

# ---- run the installed executable from outside both trees
function(cuparity out_var)
  run_checked(stdout "${exe}" ${ARGN})
  set(${out_var} "${stdout}" PARENT_SCOPE)
endfunction()

cuparity(listing list)
if(NOT listing MATCHES "binding\\.config\\.effective")
  fail("cuparity list shows no binding.config.effective:\n${listing}")
endif()
check_no_tree_paths("cuparity list" "${listing}")

set(ENV{NUMBA_CUDA_USE_NVIDIA_BINDING} 1)
cuparity(env --driver sim env --json)
unset(ENV{NUMBA_CUDA_USE_NVIDIA_BINDING})
expect_json("${env}" "config;binding" nvidia)
expect_json("${env}" "config;fallback" OFF)
expect_json("${env}" "config;simulated" ON)
expect_json("${env}" "config;nvidia_backend_path" "${pkglib}/libcuparity_nvidia.so")
expect_json("${env}" "config;driver_path" "${pkglib}/libcuparity_simdriver.so")
check_no_tree_paths("cuparity env --json" "${env}")

# The installed shim in front of the installed simulated driver: still labelled simulated.
set(ENV{CUPARITY_SHIM_TARGET} "${pkglib}/libcuparity_simdriver.so")
cuparity(env --driver "${pkglib}/libcuparity_fault_shim.so" env --json)
unset(ENV{CUPARITY_SHIM_TARGET})
expect_json("${env}" "config;simulated" ON)
expect_json("${env}" "config;driver_path" "${pkglib}/libcuparity_fault_shim.so")

set(out "${tmp}/smoke")
cuparity(console --driver sim run "${prefix}/share/cuparity/matrices/smoke.toml" -j 2
         --out "${out}")
if(NOT EXISTS "${out}/summary.json")
  fail("no ${out}/summary.json after the smoke run:\n${console}")
endif()
file(READ "${out}/summary.json" summary)
expect_json("${summary}" verdict equivalent)
expect_json("${summary}" exit_code 0)
expect_json("${summary}" "matrix;path" "${prefix}/share/cuparity/matrices/smoke.toml")
expect_json("${summary}" "provenance;simulated" ON)
check_no_tree_paths("summary.json" "${summary}")
check_no_tree_paths("the smoke run's console" "${console}")

file(REMOVE_RECURSE "${tmp}")
message(STATUS "install_from_prefix: the installed tree at ${prefix} works on its own")
