"""``python -m cloudsim`` runs the command line."""

import sys

from cloudsim.cli import main

sys.exit(main())
