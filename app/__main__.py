"""`python -m app`: the `bonnieboard` command, where the console script is not on PATH."""

import sys

from app.cli import main

sys.exit(main())
