"""``python -m synctcp_testbed.traffic.http``: :func:`.cli.main`."""

import sys

from .cli import main

sys.exit(main())
