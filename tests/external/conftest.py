"""tests/external: only test_suite_matrix.py is collected from here.

simpkg_tests/ is the external suite that `cuparity run` starts inside each cell, with the driver
and the variables the cell sets; collected by the repository's own pytest run it would load the
system driver and fail, so it is left to the matrices.
"""

# simpkg_root and simpkg_wheel: the "source tree" folders simpkg's packaged tests run from.
# simpkg_order, simpkg_failing, simpkg_collect, simpkg_fewer: small suites of the runner's rules
# (issue 49).
collect_ignore = ["simpkg_tests", "simpkg", "simpkg_root", "simpkg_wheel", "simpkg_order",
                  "simpkg_failing", "simpkg_collect", "simpkg_fewer"]
