"""``python -m mockbroker``: the ``mockbroker`` command (``python -m mockbroker serve``)."""

import sys

from mockbroker.cli import main

if __name__ == "__main__":
    sys.exit(main())
