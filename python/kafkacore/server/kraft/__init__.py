"""The broker side of KRaft (Kafka's ``BrokerServer`` around its ``SharedServer``):

* :mod:`~kafkacore.server.kraft.raft_manager` - :class:`BrokerRaftManager`, the broker as
  an observer of ``__cluster_metadata`` (Kafka's ``KafkaRaftManager``), feeding the
  committed batches and snapshots to the metadata loader, and knowing who the active
  controller is;
* :mod:`~kafkacore.server.kraft.store` - :class:`KRaftMetadataStore`, the
  :class:`~kafkacore.metadata.MetadataStore` over the metadata image: what the broker's
  config, quota, ACL and SCRAM followers already listen to, told from each delta;
* :mod:`~kafkacore.server.kraft.publisher` - :class:`BrokerMetadataPublisher`, each delta
  to the store's listeners, the replica manager (``apply_delta``), the metadata cache and
  the coordinators, in that order;
* :mod:`~kafkacore.server.kraft.lifecycle` - :class:`BrokerLifecycleManager`,
  registration, heartbeats and the broker states;
* :mod:`~kafkacore.server.kraft.forwarding` - :class:`ForwardingManager`, client requests
  to the controller inside an Envelope;
* :mod:`~kafkacore.server.kraft.membership` - :class:`KRaftMembership`, the
  :class:`~kafkacore.server.membership.Membership` of a KRaft broker.
"""
