"""`python -m cuparity ...` is the `cuparity` command."""

from cuparity import main

main()
