"""The console's views: one module per page group, each with ``NAV`` and ``routes(ctx)``
(see :mod:`kafkacore.console.app`)."""
