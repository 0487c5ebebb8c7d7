"""``python client/evalgate.py ...`` from a checkout: runs the ``evalgate`` package beside this file.

The client is a package now (``client/evalgate/``); this launcher keeps the old
command line working in a checkout. Copying this file alone no longer works: install
the package instead (``pip install ./client``, see docs/evalgate.md).
"""

import sys

# Run as a script, this file's folder is first on sys.path, and a package there wins
# over a module of the same name: "evalgate" below is client/evalgate/, not this file.
from evalgate.cli import main

if __name__ == "__main__":
    sys.exit(main())
