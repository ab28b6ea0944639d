# The driver entry tables, generated at configure time from harness/driver/entries.list and the
# toolkit's cudaTypedefs.h by cmake/entry_tables.py (see the list's header for what each holds),
# and the whole driver API (include/harness/driver/driver_api.inl, simdriver/api_*.inl) from the
# toolkit's cuda.h and typedef headers plus the newer header sets of CUPARITY_API_HEADERS
# (cmake/api_headers.py; docs/architecture.md#the-whole-driver-api).
# Included by the top level and by tools/faults/faults.cmake, so the simulated driver still builds
# on its own (cmake -S tests/simdriver). Sets CUPARITY_ENTRY_TABLES: its include/ folder holds
# harness/driver/*.inl, its simdriver/ folder the simulated driver's cuGetProcAddress table.
# A change to the list, the script or the headers re-runs the configure step.
include_guard(GLOBAL)

find_package(Python3 REQUIRED COMPONENTS Interpreter)
find_package(CUDAToolkit REQUIRED)

get_filename_component(cuparity_entry_repo ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(CUPARITY_ENTRY_TABLES ${CMAKE_BINARY_DIR}/generated/entry_tables CACHE INTERNAL
    "Folder of the generated driver entry tables")
set(CUPARITY_API_HEADERS "" CACHE STRING
    "Folders of newer CUDA header sets (each a cuda.h and cudaTypedefs.h) whose functions join the \
whole driver API table (never entries.list); scripts/api-headers fetches one")
set(cuparity_entry_inputs ${cuparity_entry_repo}/harness/driver/entries.list
    ${CMAKE_CURRENT_LIST_DIR}/entry_tables.py ${CMAKE_CURRENT_LIST_DIR}/api_headers.py)
set(cuparity_entry_arguments --list ${cuparity_entry_repo}/harness/driver/entries.list
    --output ${CUPARITY_ENTRY_TABLES})
foreach(header cudaTypedefs.h cudaProfilerTypedefs.h)
  find_file(cuparity_header_${header} ${header} PATHS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(NOT cuparity_header_${header})
    message(FATAL_ERROR "entry tables: ${header} is not in the CUDA toolkit's include folders "
                        "(${CUDAToolkit_INCLUDE_DIRS})")
  endif()
  list(APPEND cuparity_entry_arguments --header ${cuparity_header_${header}})
  list(APPEND cuparity_entry_inputs ${cuparity_header_${header}})
endforeach()

find_file(cuparity_header_cuda.h cuda.h PATHS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(NOT cuparity_header_cuda.h)
  message(FATAL_ERROR "entry tables: cuda.h is not in the CUDA toolkit's include folders "
                      "(${CUDAToolkit_INCLUDE_DIRS})")
endif()
get_filename_component(cuparity_toolkit_headers ${cuparity_header_cuda.h} DIRECTORY)
foreach(folder ${cuparity_toolkit_headers} ${CUPARITY_API_HEADERS})
  get_filename_component(folder ${folder} ABSOLUTE)
  foreach(header cuda.h cudaTypedefs.h)
    if(NOT EXISTS ${folder}/${header})
      message(FATAL_ERROR "entry tables: CUPARITY_API_HEADERS: ${folder} has no ${header} (each "
                          "folder must hold a CUDA toolkit's cuda.h and cudaTypedefs.h)")
    endif()
    list(APPEND cuparity_entry_inputs ${folder}/${header})
  endforeach()
  list(APPEND cuparity_entry_arguments --api-set ${folder})
endforeach()

execute_process(COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/entry_tables.py
                        ${cuparity_entry_arguments}
                RESULT_VARIABLE cuparity_entry_result ERROR_VARIABLE cuparity_entry_error)
if(NOT cuparity_entry_result EQUAL 0)
  message(FATAL_ERROR "entry tables: ${cuparity_entry_error}")
endif()
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${cuparity_entry_inputs})
