"""What the share handlers are given (part of the broker's services): the share
coordinator, the persister that reaches it, the share partition manager and the group
configs in force. Built once by the broker's assembly; immutable."""

from __future__ import annotations

from dataclasses import dataclass

from kafkacore.server.group_configs import GroupConfigs
from kafkacore.server.share.coordinator import ShareCoordinator
from kafkacore.server.share.manager import SharePartitionManager
from kafkacore.server.share.persister import SharePersister

__all__ = ["ShareServices"]


@dataclass(frozen=True, eq=False)
class ShareServices:
    coordinator: ShareCoordinator
    persister: SharePersister
    manager: SharePartitionManager
    group_configs: GroupConfigs
