# cuparity_faults: the fault-injection code the simulated driver and the fault shim share (the
# CUPARITY_*_FAULTS grammar, the precise delay, applying faults to a call). Included by both
# tests/simdriver/CMakeLists.txt and tools/fault_shim/CMakeLists.txt, so the simulated driver
# still builds on its own (cmake -S tests/simdriver).
#
# Sources include "tools/faults/..." and "harness/driver/exported_symbols.inl" by repository path,
# but the repository root is never an include directory (cmake/layers.cmake): the include root made
# here holds links to exactly this folder and cuda_errors.inl; exported_symbols.inl is generated
# (cmake/entry_tables.cmake).
if(TARGET cuparity_faults)
  return()
endif()

find_package(CUDAToolkit REQUIRED) # cuda.h only, for the CUresult enumerators
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/entry_tables.cmake)

get_filename_component(cuparity_faults_repo ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
set(cuparity_faults_root ${CMAKE_BINARY_DIR}/fault_includes)
file(MAKE_DIRECTORY ${cuparity_faults_root}/tools ${cuparity_faults_root}/harness/driver)
file(CREATE_LINK ${cuparity_faults_repo}/tools/faults ${cuparity_faults_root}/tools/faults
     SYMBOLIC)
foreach(fact cuda_errors.inl)
  file(CREATE_LINK ${cuparity_faults_repo}/harness/driver/${fact}
       ${cuparity_faults_root}/harness/driver/${fact} SYMBOLIC)
endforeach()

add_library(cuparity_faults STATIC
  ${cuparity_faults_repo}/tools/faults/cuda_error_names.cpp
  ${cuparity_faults_repo}/tools/faults/exported_symbol.cpp
  ${cuparity_faults_repo}/tools/faults/fault_set.cpp
  ${cuparity_faults_repo}/tools/faults/fault_spec.cpp
  ${cuparity_faults_repo}/tools/faults/precise_delay.cpp)
target_include_directories(cuparity_faults PUBLIC ${cuparity_faults_root}
                           ${CUPARITY_ENTRY_TABLES}/include)
target_include_directories(cuparity_faults PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_features(cuparity_faults PUBLIC cxx_std_20)
# Linked into shared libraries that export only the driver API: position independent, hidden.
# Not a unity build: each file declares the exported symbols it needs from exported_symbols.inl,
# and two such files in one batch would declare them twice.
set_target_properties(cuparity_faults PROPERTIES POSITION_INDEPENDENT_CODE ON
                      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON UNITY_BUILD OFF)
target_compile_options(cuparity_faults PRIVATE -Wall -Wextra)
