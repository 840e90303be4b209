"""``python -m synctcp_mininet``: the ``synctcp-mininet`` command."""

import sys

from .cli import main

sys.exit(main())
