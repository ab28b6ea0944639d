# What the tests of an installed tree share (install_from_prefix.cmake, example_project.cmake): a
# fresh temporary folder outside both trees, an environment with nothing inherited that could
# point back into them, the install itself, and checks of what the installed programs report.
# Included by a `cmake -P` script that sets BUILD_DIR and SOURCE_DIR; `fail` names ${tmp}.

foreach(v BUILD_DIR SOURCE_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${v} is required")
  endif()
  file(REAL_PATH "${${v}}" ${v})
endforeach()

function(fail what)
  get_filename_component(script "${CMAKE_SCRIPT_MODE_FILE}" NAME_WE)
  message(FATAL_ERROR "${script}: ${what}\n(kept for inspection: ${tmp})")
endfunction()

# True when `path` is `root` or inside it.
function(is_within out path root)
  string(LENGTH "${root}/" n)
  string(SUBSTRING "${path}/" 0 ${n} head)
  if(head STREQUAL "${root}/")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Sets `out_var` to a fresh folder cuparity-<tag>-<random> under $TMPDIR (or /tmp), refusing one
# inside the source or build tree.
function(fresh_temporary_folder out_var tag)
  set(tmp_root "$ENV{TMPDIR}")
  if(NOT tmp_root)
    set(tmp_root /tmp)
  endif()
  file(REAL_PATH "${tmp_root}" tmp_root)
  string(RANDOM LENGTH 10 ALPHABET abcdefghijklmnopqrstuvwxyz0123456789 suffix)
  set(folder "${tmp_root}/cuparity-${tag}-${suffix}")
  foreach(root "${SOURCE_DIR}" "${BUILD_DIR}")
    is_within(inside "${folder}" "${root}")
    if(inside)
      message(FATAL_ERROR "the temporary folder ${folder} lies in ${root}: set TMPDIR elsewhere")
    endif()
  endforeach()
  file(MAKE_DIRECTORY "${folder}")
  set(${out_var} "${folder}" PARENT_SCOPE)
endfunction()

# No inherited library path, preload or binding/simulator variable.
function(clear_inherited_environment)
  unset(ENV{LD_LIBRARY_PATH})
  unset(ENV{LD_PRELOAD})
  unset(ENV{CUDA_VISIBLE_DEVICES})
  execute_process(COMMAND "${CMAKE_COMMAND}" -E environment OUTPUT_VARIABLE environment)
  string(REGEX MATCHALL "(^|\n)(CUPARITY_|NUMBA_CUDA_|CUDA_PYTHON_)[A-Za-z0-9_]*=" names
         "${environment}")
  foreach(n IN LISTS names)
    string(REGEX REPLACE "^\n?(.*)=$" "\\1" n "${n}")
    unset(ENV{${n}})
  endforeach()
endfunction()

# `cmake --install` of the build into `prefix`: the default components, then each one named.
function(install_build prefix)
  foreach(component "" ${ARGN})
    set(args)
    if(component)
      set(args --component ${component})
    endif()
    execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
                            ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      fail("cmake --install ${args} failed (${rc}):\n${out}")
    endif()
  endforeach()
endfunction()

# No path of either tree may show in `text` (what an installed program reports, an installed file).
function(check_no_tree_paths what text)
  foreach(root "${SOURCE_DIR}" "${BUILD_DIR}")
    string(FIND "${text}" "${root}" at)
    if(at GREATER -1)
      string(SUBSTRING "${text}" ${at} 200 around)
      fail("${what} names the tree ${root}: ...${around}")
    endif()
  endforeach()
endfunction()

function(expect_json json what expected)
  string(JSON value ERROR_VARIABLE err GET "${json}" ${what})
  if(err)
    fail("${what}: ${err}")
  endif()
  string(REPLACE ";" "." name "${what}")
  if(NOT value STREQUAL expected)
    fail("${name} is '${value}', expected '${expected}'")
  endif()
endfunction()

# Runs `program` with the arguments after it in ${work}; its stdout goes to `out_var`, and any exit
# but 0 fails the test with both streams.
function(run_checked out_var program)
  execute_process(COMMAND "${program}" ${ARGN} WORKING_DIRECTORY "${work}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    fail("${program} ${command} exited ${rc}\nstdout:\n${stdout}\nstderr:\n${stderr}")
  endif()
  set(${out_var} "${stdout}" PARENT_SCOPE)
endfunction()
