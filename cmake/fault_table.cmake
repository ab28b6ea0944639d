# The simulated driver's full fault table, made at build time, never committed:
#   cmake --build build --target fault_table   ->   build/docs/fault-table-sim.md
# It runs `cuparity --driver sim faults matrices/faults.toml --devices 2 -j 3` from the source
# folder (every exported symbol x every fault: 780 trials, about 7 minutes on two cores, so it is
# not part of ALL) and writes the table `cuparity faults` writes (faults.md) with the paths in it
# made relative to the source folder, so the page is the same wherever the tree is. The trials
# and faults.json stay in build/fault-table/. docs/fault-coverage.md says what the table shows.
#
# Included by the top-level CMakeLists.txt after tests/ (where the simulated driver is defined);
# also the step itself, in script mode: cmake -DCUPARITY=... -DSOURCE_DIR=... -DWORK=... -DOUTPUT=...
# [-DJOBS=3] -P cmake/fault_table.cmake

if(CMAKE_SCRIPT_MODE_FILE)
  foreach(var CUPARITY SOURCE_DIR WORK OUTPUT)
    if("${${var}}" STREQUAL "")
      message(FATAL_ERROR "fault_table.cmake: -D${var}=... is needed")
    endif()
  endforeach()
  if(NOT JOBS)
    set(JOBS 3)
  endif()
  # A fresh run: `cuparity faults` refuses an --out that holds an earlier run (without --resume),
  # and trials of an older binary are not this build's table.
  file(REMOVE_RECURSE "${WORK}")
  execute_process(
    COMMAND "${CUPARITY}" --driver sim faults matrices/faults.toml --devices 2 -j ${JOBS} --out "${WORK}"
    WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE code)
  # 0: every trial caught; 1: some were not (the table lists them: that is what it is for).
  if(NOT code MATCHES "^[01]$" OR NOT EXISTS "${WORK}/faults.md")
    message(FATAL_ERROR "cuparity faults exited ${code}; no fault table (its trials: ${WORK})")
  endif()
  file(READ "${WORK}/faults.md" table)
  # The driver under test is named by its absolute path (the simulated driver beside cuparity):
  # relative to the source folder, as every other path of the page is.
  if(table MATCHES "Driver under test: `([^`]+)`")
    set(driver "${CMAKE_MATCH_1}")
    file(RELATIVE_PATH relative "${SOURCE_DIR}" "${driver}")
    string(REPLACE "`${driver}`" "`${relative}`" table "${table}")
  endif()
  string(REPLACE "${SOURCE_DIR}/" "" table "${table}")
  get_filename_component(folder "${OUTPUT}" DIRECTORY)
  file(MAKE_DIRECTORY "${folder}")
  file(WRITE "${OUTPUT}.part" "${table}")
  file(RENAME "${OUTPUT}.part" "${OUTPUT}")
  message(STATUS "Wrote ${OUTPUT} (cuparity faults exit ${code}; trials in ${WORK})")
  return()
endif()

if(NOT TARGET cuparity_simdriver)
  return() # CUPARITY_ENABLE_TESTS=OFF: no simulated driver, no table
endif()
set(CUPARITY_FAULT_TABLE_JOBS 3 CACHE STRING "Trials at once for the fault_table target (cuparity faults -j)")
set(CUPARITY_FAULT_TABLE ${CMAKE_BINARY_DIR}/docs/fault-table-sim.md)
add_custom_command(
  OUTPUT ${CUPARITY_FAULT_TABLE}
  COMMAND ${CMAKE_COMMAND} -DCUPARITY=$<TARGET_FILE:cuparity> -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DWORK=${CMAKE_BINARY_DIR}/fault-table -DOUTPUT=${CUPARITY_FAULT_TABLE}
          -DJOBS=${CUPARITY_FAULT_TABLE_JOBS} -P ${CMAKE_CURRENT_LIST_DIR}/fault_table.cmake
  DEPENDS cuparity cuparity_nvidia cuparity_simdriver ${CMAKE_SOURCE_DIR}/matrices/faults.toml
          ${CMAKE_CURRENT_LIST_DIR}/fault_table.cmake
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  USES_TERMINAL
  COMMENT "Fault table of the simulated driver (cuparity --driver sim faults: about 7 minutes on two cores)")
add_custom_target(fault_table DEPENDS ${CUPARITY_FAULT_TABLE})
