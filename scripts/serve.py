"""Serve the web page to play the model and see what it thinks: see docs/web.md.

    python scripts/serve.py [--model PATH | --run-dir DIR] [--host 127.0.0.1] [--port 8000]
"""

import sys

from alphagomoku.web.cli import main

if __name__ == "__main__":
    sys.exit(main())
