"""``python -m singletable.cli``: the same commands as the ``singletable`` script."""

import sys

from singletable.cli import main

sys.exit(main())
