"""kafkacore — Apache Kafka's log engine, embeddable in Python, with a Rust hot path.

``kafkacore.native.backend`` is the selected implementation of the storage core
(``KAFKACORE_BACKEND=native|pure``); ``kafkacore.record`` wraps it with named types.
"""

from __future__ import annotations

from kafkacore import errors
from kafkacore.native import backend, backend_name

__all__ = ["__version__", "backend", "backend_name", "errors"]

__version__ = "0.1.0"
