#!/usr/bin/env bash
# The README's security walk-through, step by step, against the broker started with
# server.properties (run from this directory; BOOTSTRAP overrides the address).
set -euo pipefail
B=${BOOTSTRAP:-localhost:9093}

# 1. a SCRAM user for the application (stored salted; the password never is)
kafkacore configs --bootstrap-server "$B" --command-config admin.properties --alter \
    --add-config 'SCRAM-SHA-512=[password=alice-secret]' --entity-type users --entity-name alice

# 2. a topic, and the ACLs alice needs to produce to it and to consume it in group billing
kafkacore topics --bootstrap-server "$B" --command-config admin.properties \
    --create --topic orders --partitions 3
kafkacore acls --bootstrap-server "$B" --command-config admin.properties \
    --add --allow-principal User:alice --producer --topic orders
kafkacore acls --bootstrap-server "$B" --command-config admin.properties \
    --add --allow-principal User:alice --consumer --topic orders --group billing

# 3. alice produces and consumes
printf 'order-1\norder-2\norder-3\n' | kafkacore console-producer --bootstrap-server "$B" \
    --producer.config alice.properties --topic orders
kafkacore console-consumer --bootstrap-server "$B" --consumer.config alice.properties \
    --topic orders --group billing --from-beginning --max-messages 3
