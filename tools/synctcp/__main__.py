"""python -m synctcp"""
import sys

from .cli import main

sys.exit(main())
