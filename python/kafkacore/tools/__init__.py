"""Offline tools over kafkacore's (= Apache Kafka's) on-disk files.

:mod:`kafkacore.tools.dump_log` is ``kafka-dump-log``; the ``kafkacore`` command
(:mod:`kafkacore.cli`) exposes each tool as a subcommand.
"""
