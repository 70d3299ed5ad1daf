"""``python -m kafkacore.cli``: the ``kafkacore`` command."""

import sys

from kafkacore.cli import main

sys.exit(main())
