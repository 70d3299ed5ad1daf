"""``python -m kafkacore``: the ``kafkacore`` command (``python -m kafkacore.cli`` too)."""

import sys

from kafkacore.cli import main

if __name__ == "__main__":
    sys.exit(main())
