# cuparity as a library, as a user meets it: install the build (plus the simulated driver) into a
# fresh prefix, configure and build examples/ against it with find_package(cuparity) alone, then
# run the example's executable from outside every tree, with nothing inherited: it must list only
# its own case, find the installed nvidia backend and simulated driver through the path the CMake
# package compiled into it, and run its matrix through the full runner (cells, latency probes,
# judge): verdict equivalent, its case passed in every cell, its probe timed.
#
#   cmake -DBUILD_DIR=<build> -DSOURCE_DIR=<source> -DGENERATOR=<generator>
#         [-DMAKE_PROGRAM=<ninja>] [-DCXX_COMPILER=<c++>] -P example_project.cmake
include(${CMAKE_CURRENT_LIST_DIR}/install_support.cmake)

fresh_temporary_folder(tmp example)
set(prefix "${tmp}/prefix")
set(work "${tmp}/work")
set(example_build "${tmp}/example-build")
file(MAKE_DIRECTORY "${prefix}" "${work}")
clear_inherited_environment()
install_build("${prefix}" simdriver)

# The package names no path of the trees it was built in.
foreach(f lib/cmake/cuparity/cuparity-config.cmake
          include/cuparity/harness/framework/case_registry.hpp
          include/cuparity/harness/probes/probe_registry.hpp
          include/cuparity/harness/driver/entries.inl)
  if(NOT EXISTS "${prefix}/${f}")
    fail("${f} is missing from the installed tree")
  endif()
endforeach()
file(GLOB package_files "${prefix}/lib/cmake/cuparity/*")
foreach(f IN LISTS package_files)
  file(READ "${f}" text)
  check_no_tree_paths("${f}" "${text}")
endforeach()

# ---- the example project, configured and built as its README says
set(configure_args -S "${SOURCE_DIR}/examples" -B "${example_build}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
function(cmake_step)
  execute_process(COMMAND "${CMAKE_COMMAND}" ${ARGN} WORKING_DIRECTORY "${work}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    fail("cmake ${command} failed (${rc}):\n${out}")
  endif()
endfunction()
cmake_step(${configure_args})
cmake_step(--build "${example_build}" -j 2)
set(exe "${example_build}/mylib_parity")
if(NOT EXISTS "${exe}")
  fail("the example built no ${exe}")
endif()

# Its own cases only: cuparity's built-in suites are in cuparity's executable, not in the library.
run_checked(listing "${exe}" list)
if(NOT listing MATCHES "mylib\\.memory\\.roundtrip" OR NOT listing MATCHES "mylib\\.kernel\\.fill"
   OR listing MATCHES "binding\\.config\\.")
  fail("the example's `list` must show its two cases and no cuparity case:\n${listing}")
endif()
run_checked(probes "${exe}" probe --list)
if(NOT probes MATCHES "mylib\\.mem_get_info")
  fail("the example's `probe --list` shows no mylib.mem_get_info:\n${probes}")
endif()

# The plugin and the simulated driver: neither is beside the executable nor in its ../lib/cuparity,
# so only the prefix the package registered can have given them.
set(pkglib "${prefix}/lib/cuparity")
set(ENV{NUMBA_CUDA_USE_NVIDIA_BINDING} 1)
run_checked(env "${exe}" --driver sim env --json)
unset(ENV{NUMBA_CUDA_USE_NVIDIA_BINDING})
expect_json("${env}" "config;binding" nvidia)
expect_json("${env}" "config;fallback" OFF)
expect_json("${env}" "config;nvidia_backend_path" "${pkglib}/libcuparity_nvidia.so")
expect_json("${env}" "config;driver_path" "${pkglib}/libcuparity_simdriver.so")

# ---- the full runner: cells (the executable re-run as `cell`), probes, the judge
set(out "${tmp}/mylib")
run_checked(console "${exe}" --driver sim run "${SOURCE_DIR}/examples/mylib.toml" -j 2
            --out "${out}")
file(READ "${out}/summary.json" summary)
expect_json("${summary}" verdict equivalent)
expect_json("${summary}" exit_code 0)
expect_json("${summary}" "provenance;simulated" ON)
string(JSON cells LENGTH "${summary}" cells)
if(NOT cells EQUAL 4)
  fail("summary.json has ${cells} cells, expected the matrix's 4")
endif()
string(JSON probe ERROR_VARIABLE err GET "${summary}" latency probes 0 name)
if(err OR NOT probe STREQUAL "mylib.mem_get_info")
  fail("summary.json's latency block has no mylib.mem_get_info (${err}):\n${console}")
endif()

# Every cell ran the example's case, and it passed.
# One list item per line: a ';' inside a record (a message, the provenance's argv) would split it.
file(READ "${out}/results.jsonl" text)
string(REPLACE ";" "<semicolon>" text "${text}")
string(REGEX REPLACE "\n$" "" text "${text}")
string(REPLACE "\n" ";" records "${text}")
set(passed 0)
foreach(record IN LISTS records)
  string(REPLACE "<semicolon>" ";" record "${record}")
  string(JSON type GET "${record}" type)
  if(type STREQUAL "case")
    string(JSON id GET "${record}" case)
    string(JSON outcome GET "${record}" outcome)
    if(NOT id MATCHES "^mylib\\.(memory\\.roundtrip|kernel\\.fill)$" OR NOT outcome STREQUAL "pass")
      fail("results.jsonl: ${id} ${outcome}, expected only the example's two cases passing:\n"
           "${record}")
    endif()
    math(EXPR passed "${passed} + 1")
  endif()
endforeach()
if(NOT passed EQUAL 8)
  fail("results.jsonl has ${passed} results of the example's cases, expected 8 (two per cell)")
endif()

file(REMOVE_RECURSE "${tmp}")
message(STATUS "example_project: examples/ built against ${prefix} runs its own suite")
