"""``python -m evalgate ...``: the same command as ``evalgate``."""

import sys

from .cli import main

sys.exit(main())
