"""tests/packages: the package-version axis, run end to end on the simulated driver.

Only test_package_axis.py is collected; the suite it writes into its tmp_path is run by cuparity.
"""
