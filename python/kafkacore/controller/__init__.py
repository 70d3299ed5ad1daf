"""The ZooKeeper-mode controller (Kafka's ``KafkaController``): algorithms, context,
state machines, channel manager and the single-task event loop."""
