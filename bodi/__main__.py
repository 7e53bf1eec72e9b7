"""``python -m bodi``."""

import sys

from bodi.cli import main

sys.exit(main())
