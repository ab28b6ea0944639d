"""Entry point for `python3 -m cuparity_reports`."""

import sys

from .cli import main

sys.exit(main())
