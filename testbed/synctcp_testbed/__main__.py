"""``python3 -m synctcp_testbed``: the ``synctcp-testbed`` command (:func:`.cli.main`)."""

import sys

from .cli import main

sys.exit(main())
