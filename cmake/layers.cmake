# Layers as libraries whose include paths follow the dependency arrows.
#
# Every folder of harness/ (and backends/internal, cases/) is one library. Sources include headers
# by their repository path ("harness/driver/driver.hpp"), but the repository root is never an
# include directory: each library publishes an include root of its own in the build tree, holding
# a link to its folder and nothing else. A library therefore sees exactly the folders of the
# libraries it links (transitively, PUBLIC), and an #include of a layer it does not depend on fails
# to compile with "No such file or directory". docs/architecture.md draws the arrows.
include(GNUInstallDirs)

# cuparity_layer(NAME FOLDER <repo-relative folder> [SOURCES ...] [DEPENDS layer ...]
#                [LIBS target ...] [KIND STATIC|OBJECT])
function(cuparity_layer name)
  cmake_parse_arguments(L "" "FOLDER;KIND" "SOURCES;DEPENDS;LIBS" ${ARGN})
  if(NOT L_KIND)
    set(L_KIND STATIC)
  endif()
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  get_filename_component(parent ${root}/${L_FOLDER} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${L_FOLDER} ${root}/${L_FOLDER} SYMBOLIC)
  set(scope PUBLIC)
  if(L_KIND STREQUAL "INTERFACE")
    set(scope INTERFACE)
  endif()
  add_library(cuparity_${name} ${L_KIND} ${L_SOURCES})
  # Installed (cmake/install.cmake), the headers keep their repository paths under
  # include/cuparity, so the same #include lines work in a user's project.
  target_include_directories(cuparity_${name} ${scope} $<BUILD_INTERFACE:${root}>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/cuparity>)
  target_compile_features(cuparity_${name} ${scope} cxx_std_20)
  set_target_properties(cuparity_${name} PROPERTIES EXPORT_NAME ${name} CUPARITY_FOLDER ${L_FOLDER}
                                                  CUPARITY_DEPENDS "${L_DEPENDS}")
  set(deps)
  foreach(d IN LISTS L_DEPENDS)
    list(APPEND deps cuparity_${d})
  endforeach()
  target_link_libraries(cuparity_${name} ${scope} ${deps} ${L_LIBS})
  set_property(GLOBAL APPEND PROPERTY CUPARITY_LAYERS ${name})
endfunction()

# The sources of one harness folder, listed by the folder's own name.
function(cuparity_harness_layer name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/harness/${name}/*.cpp)
  cuparity_layer(${name} FOLDER harness/${name} SOURCES ${sources} ${ARGN})
endfunction()

# The layer list as the build knows it, one line per layer: name, folder, the layers it DEPENDS
# on (comma-separated), tab-separated, in definition order. docs/architecture.md's diagram and
# folder list are checked against it (tests/layers/check_architecture.py).
function(cuparity_write_layer_list path)
  get_property(layers GLOBAL PROPERTY CUPARITY_LAYERS)
  set(text "")
  foreach(layer IN LISTS layers)
    get_target_property(folder cuparity_${layer} CUPARITY_FOLDER)
    get_target_property(deps cuparity_${layer} CUPARITY_DEPENDS)
    string(REPLACE ";" "," deps "${deps}")
    string(APPEND text "${layer}\t${folder}\t${deps}\n")
  endforeach()
  file(WRITE ${path} "${text}")
endfunction()
