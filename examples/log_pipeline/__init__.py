"""The log-monitoring example: a log agent producing JSON events to kafkacore, a Spark
Structured Streaming job aggregating them per service and minute through the ``kafkacore``
data source, and a runner that starts it all (``kafkacore pipeline demo``). See README.md."""
