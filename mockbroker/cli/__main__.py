"""``python -m mockbroker.cli``: the ``mockbroker`` command."""

import sys

from mockbroker.cli import main

sys.exit(main())
