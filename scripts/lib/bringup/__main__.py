"""python -m bringup: the same as the bringup command."""

import sys

from bringup.cli import main

sys.exit(main())
