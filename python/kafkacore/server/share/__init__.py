"""Share groups on the partition leader (KIP-932): the share partitions beside each
``Partition`` (:mod:`~kafkacore.server.share.partition`), the share sessions, the share
partition manager that serves ShareFetch and ShareAcknowledge, the persister that keeps
their state with the share coordinator, and the share coordinator itself (a shard type on
the coordinator runtime over ``__share_group_state``)."""
