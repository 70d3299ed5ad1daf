"""Operations over a Kafka cluster's admin client, public and typed (Kafka's
``ReassignPartitionsCommand.generateAssignment(Admin, …)``, ``ConsumerGroupCommand``,
``LeaderElectionCommand``): the library the ``kafkacore`` tools (option parsing and
printing) and the web console both call.

* :mod:`~kafkacore.admin.client` - :class:`Admin` (confluent-kafka's AdminClient plus the
  few raw requests it lacks), :class:`AdminError`;
* :mod:`~kafkacore.admin.cluster` - metadata, brokers, replica assignments, the
  controller's requests;
* :mod:`~kafkacore.admin.reassign` - reassignment generate / execute / verify / cancel /
  list, with typed states;
* :mod:`~kafkacore.admin.throttles` - the replication throttles of a reassignment;
* :mod:`~kafkacore.admin.elections` - preferred and unclean leader elections;
* :mod:`~kafkacore.admin.balancer` - the controller's partition balancer: settings, the
  moves in flight, the plan and skew, pause/resume and decommissioning;
* :mod:`~kafkacore.admin.groups` - consumer groups: list, describe, lag, committed and end
  offsets, reset, delete;
* :mod:`~kafkacore.admin.ordering` - the order Kafka's tools print sets in (Java's
  ``HashSet``).

Every operation blocks; run them off an event loop.
"""

from __future__ import annotations

from kafkacore.admin.client import TP, Admin, AdminError, RawSender

__all__ = ["TP", "Admin", "AdminError", "RawSender"]
