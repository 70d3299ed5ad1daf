"""The broker crash sweep (``make crash-sweep``; a bounded run in ``make test``): a
kafkacore broker process SIGKILLed at seeded points under real clients' load, restarted on
the data it left, and checked (see :mod:`broker_crash.sweep`)."""
