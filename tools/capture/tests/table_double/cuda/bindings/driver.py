"""The fake's driver module: imports the table module, binds it at the first call."""

from cuda.bindings._internal import driver as _table


def cuInit(flags=0):
    _table._check_or_init()
    return 0
