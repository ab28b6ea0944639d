# Device code for cuparity's kernel registry (harness/framework/kernel_registry.hpp): nvcc builds each
# .cu into PTX and a cubin for every architecture, and one fatbin, and a generated source embeds
# them with one CUPARITY_KERNEL_IMAGE line per image. Usable from any project (nothing here names
# this repository's folders):
#
#   include(kernels.cmake)
#   cuparity_add_kernels(TARGET my_kernels SOURCES saxpy.cu [ARCHITECTURES 80 90]
#                        [LINK cuparity::harness])
#   target_link_libraries(my_runner PRIVATE my_kernels)
#
# TARGET becomes an OBJECT library (images register from static initialisers, which a static
# library would let the linker drop); LINK is what gives it the registry's header. A case then
# loads "saxpy.cubin", "saxpy.ptx" or "saxpy.fatbin" and gets the image for its device.
#
# ARCHITECTURES defaults to CUPARITY_CUDA_ARCHITECTURES, which defaults to every real
# architecture the toolkit's nvcc lists (`nvcc --list-gpu-code`): a cubin and PTX for each, and a
# fatbin holding the machine code of each plus the newest one's PTX, for JIT on later GPUs.

set(CUPARITY_KERNELS_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_kernels.cmake)
find_program(CUPARITY_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} $ENV{CUDA_HOME}/bin
             /usr/local/cuda/bin REQUIRED)

# The SM numbers of every real architecture nvcc can build ("sm_75;sm_80;..." -> 75;80;...),
# sorted, into OUT.
function(cuparity_toolkit_architectures out)
  execute_process(COMMAND ${CUPARITY_NVCC} --list-gpu-code OUTPUT_VARIABLE listed
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCHALL "sm_[0-9]+" codes "${listed}")
  if(NOT rc EQUAL 0 OR NOT codes)
    message(FATAL_ERROR "cuparity_toolkit_architectures: `${CUPARITY_NVCC} --list-gpu-code` "
                        "listed no sm_XX (exit ${rc}); set CUPARITY_CUDA_ARCHITECTURES")
  endif()
  list(TRANSFORM codes REPLACE "sm_" "")
  list(SORT codes COMPARE NATURAL)
  set(${out} ${codes} PARENT_SCOPE)
endfunction()

if(NOT DEFINED CUPARITY_CUDA_ARCHITECTURES OR CUPARITY_CUDA_ARCHITECTURES STREQUAL "")
  cuparity_toolkit_architectures(cuparity_all_architectures)
  set(CUPARITY_CUDA_ARCHITECTURES "${cuparity_all_architectures}" CACHE STRING
      "SM numbers the kernels are built for (default: every one nvcc lists)" FORCE)
endif()

# The nvcc steps of one .cu: PTX and cubin per architecture, one fatbin. Appends the outputs to
# ${outputs_var} and their "<kernel>;<format>;<sm>" descriptions to ${specs_var}.
function(cuparity_kernel_commands src dir archs outputs_var specs_var)
  get_filename_component(kernel ${src} NAME_WE)
  get_filename_component(in ${src} ABSOLUTE)
  set(outputs ${${outputs_var}})
  set(specs ${${specs_var}})
  set(gencodes)
  foreach(sm IN LISTS archs)
    set(base ${dir}/${kernel}.sm_${sm})
    add_custom_command(OUTPUT ${base}.ptx
      COMMAND ${CUPARITY_NVCC} -ptx -arch=compute_${sm} -o ${base}.ptx ${in}
      DEPENDS ${in} COMMENT "nvcc ${kernel}.cu -> PTX (compute_${sm})" VERBATIM)
    add_custom_command(OUTPUT ${base}.cubin
      COMMAND ${CUPARITY_NVCC} -cubin -arch=sm_${sm} -o ${base}.cubin ${in}
      DEPENDS ${in} COMMENT "nvcc ${kernel}.cu -> cubin (sm_${sm})" VERBATIM)
    list(APPEND outputs ${base}.ptx ${base}.cubin)
    list(APPEND specs "${kernel}:ptx:${sm}" "${kernel}:cubin:${sm}")
    list(APPEND gencodes -gencode arch=compute_${sm},code=sm_${sm})
  endforeach()
  list(GET archs -1 newest)
  list(APPEND gencodes -gencode arch=compute_${newest},code=compute_${newest})
  add_custom_command(OUTPUT ${dir}/${kernel}.fatbin
    COMMAND ${CUPARITY_NVCC} -fatbin ${gencodes} -o ${dir}/${kernel}.fatbin ${in}
    DEPENDS ${in} COMMENT "nvcc ${kernel}.cu -> fatbin (sm_${archs}, compute_${newest})"
    VERBATIM)
  list(APPEND outputs ${dir}/${kernel}.fatbin)
  list(APPEND specs "${kernel}:fatbin:0")
  set(${outputs_var} ${outputs} PARENT_SCOPE)
  set(${specs_var} ${specs} PARENT_SCOPE)
endfunction()

# cuparity_kernel_sources(<out_var> NAME <name> SOURCES <.cu>... [ARCHITECTURES <sm>...]):
# the nvcc steps and the generated source that embeds and registers their outputs; sets
# <out_var> to that source, for a library of the caller's own making.
function(cuparity_kernel_sources out_var)
  cmake_parse_arguments(K "" "NAME" "SOURCES;ARCHITECTURES" ${ARGN})
  if(NOT K_NAME OR NOT K_SOURCES)
    message(FATAL_ERROR "cuparity_kernel_sources: NAME and SOURCES are required")
  endif()
  if(NOT K_ARCHITECTURES)
    set(K_ARCHITECTURES ${CUPARITY_CUDA_ARCHITECTURES})
  endif()
  list(SORT K_ARCHITECTURES COMPARE NATURAL)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${K_NAME}_images)
  file(MAKE_DIRECTORY ${dir})
  set(outputs)
  set(specs)
  foreach(src IN LISTS K_SOURCES)
    cuparity_kernel_commands(${src} ${dir} "${K_ARCHITECTURES}" outputs specs)
  endforeach()
  set(generated ${dir}/${K_NAME}_embedded.cpp)
  add_custom_command(OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} "-DINPUTS=${outputs}" "-DSPECS=${specs}" -DOUTPUT=${generated}
            -P ${CUPARITY_KERNELS_EMBED_SCRIPT}
    DEPENDS ${outputs} ${CUPARITY_KERNELS_EMBED_SCRIPT}
    COMMENT "Embedding the kernel images of ${K_NAME}" VERBATIM)
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()

# cuparity_add_kernels(TARGET <name> SOURCES <.cu>... [ARCHITECTURES <sm>...] [LINK <target>...])
function(cuparity_add_kernels)
  cmake_parse_arguments(K "" "TARGET" "SOURCES;ARCHITECTURES;LINK" ${ARGN})
  if(NOT K_TARGET)
    message(FATAL_ERROR "cuparity_add_kernels: TARGET is required")
  endif()
  cuparity_kernel_sources(generated NAME ${K_TARGET} SOURCES ${K_SOURCES}
                          ARCHITECTURES ${K_ARCHITECTURES})
  add_library(${K_TARGET} OBJECT ${generated})
  target_link_libraries(${K_TARGET} PRIVATE ${K_LINK})
endfunction()
