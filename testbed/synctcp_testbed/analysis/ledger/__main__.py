"""``python -m synctcp_testbed.analysis.ledger``: :func:`.cli.main`."""

import sys

from .cli import main

sys.exit(main())
