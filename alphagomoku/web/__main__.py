"""``python -m alphagomoku.web``: the same as ``alphagomoku-web``."""

import sys

from alphagomoku.web.cli import main

sys.exit(main())
