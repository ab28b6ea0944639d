# The C++ libraries cuparity builds against. Each is looked for on the system first (Debian's
# packages, which scripts/bootstrap installs); one that is missing is fetched at configure time
# from its release archive, checked against its SHA-256 (FetchContent, FIND_PACKAGE_ARGS: the
# find_package call comes first). -DCUPARITY_FETCH_DEPENDENCIES=OFF (an offline or packaging build)
# refuses to fetch and names the package to install instead. zlib is never fetched: every
# distribution has it (zlib1g-dev on Debian).
include(FetchContent)
option(CUPARITY_FETCH_DEPENDENCIES "Fetch a C++ dependency the system lacks at configure time" ON)

# cuparity_dependency(NAME <find_package name> DEBIAN <package> VERSION <min> URL <url>
#                     SHA256 <hash> [TARGET <target the project links>] [OPTIONS <var=value>...])
function(cuparity_dependency)
  cmake_parse_arguments(d "" "NAME;DEBIAN;VERSION;URL;SHA256;TARGET" "OPTIONS" ${ARGN})
  if(NOT CUPARITY_FETCH_DEPENDENCIES)
    find_package(${d_NAME} ${d_VERSION} QUIET)
    if(NOT ${d_NAME}_FOUND)
      message(FATAL_ERROR "cuparity needs ${d_NAME} ${d_VERSION} or newer, which is not installed: "
                          "install the Debian package ${d_DEBIAN} (scripts/bootstrap does), or "
                          "configure with -DCUPARITY_FETCH_DEPENDENCIES=ON to fetch ${d_URL}")
    endif()
    return()
  endif()
  foreach(option IN LISTS d_OPTIONS)
    string(REPLACE "=" ";" pair "${option}")
    list(GET pair 0 var)
    list(GET pair 1 value)
    set(${var} ${value} CACHE INTERNAL "set by cmake/dependencies.cmake for a fetched ${d_NAME}")
  endforeach()
  FetchContent_Declare(${d_NAME} URL ${d_URL} URL_HASH SHA256=${d_SHA256}
                       DOWNLOAD_EXTRACT_TIMESTAMP TRUE FIND_PACKAGE_ARGS ${d_VERSION})
  FetchContent_MakeAvailable(${d_NAME})
  if(NOT ${d_NAME}_FOUND)
    message(STATUS "${d_NAME}: not installed (Debian: ${d_DEBIAN}); fetched ${d_URL}")
    set_property(GLOBAL APPEND PROPERTY CUPARITY_FETCHED_DEPENDENCIES ${d_NAME})
  endif()
  if(d_TARGET AND NOT TARGET ${d_TARGET})
    message(FATAL_ERROR "${d_NAME} gave no target ${d_TARGET}: install the Debian package "
                        "${d_DEBIAN}")
  endif()
endfunction()

cuparity_dependency(NAME nlohmann_json DEBIAN nlohmann-json3-dev VERSION 3.11
  URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz
  SHA256 d6c65aca6b1ed68e7a182f4757257b107ae403032760ed6ef121c9d55e81757d
  TARGET nlohmann_json::nlohmann_json OPTIONS JSON_BuildTests=OFF JSON_Install=OFF)
cuparity_dependency(NAME CLI11 DEBIAN libcli11-dev VERSION 2.1
  URL https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.4.2.tar.gz
  SHA256 f2d893a65c3b1324c50d4e682c0cdc021dd0477ae2c048544f39eed6654b699a
  TARGET CLI11::CLI11 OPTIONS CLI11_BUILD_TESTS=OFF CLI11_BUILD_EXAMPLES=OFF CLI11_INSTALL=OFF)
# Static: the runner carries its own copy (harness/external/junit_report).
cuparity_dependency(NAME pugixml DEBIAN libpugixml-dev VERSION 1.11
  URL https://github.com/zeux/pugixml/releases/download/v1.14/pugixml-1.14.tar.gz
  SHA256 2f10e276870c64b1db6809050a75e11a897a8d7456c4be5c6b2e35a11168a015
  TARGET pugixml::static OPTIONS PUGIXML_BUILD_TESTS=OFF)
cuparity_dependency(NAME tomlplusplus DEBIAN libtomlplusplus-dev VERSION 3.3
  URL https://github.com/marzer/tomlplusplus/archive/v3.4.0.tar.gz
  SHA256 8517f65938a4faae9ccf8ebb36631a38c1cadfb5efa85d9a72e15b9e97d25155
  TARGET tomlplusplus::tomlplusplus)
find_package(ZLIB)
if(NOT ZLIB_FOUND)
  message(FATAL_ERROR "cuparity needs zlib's headers and library: install the Debian package "
                      "zlib1g-dev")
endif()
