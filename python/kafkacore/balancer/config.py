"""The balancer's settings, read from the broker configs it is registered with
(``auto.partition.balance.*`` in :mod:`kafkacore.config.broker_defs`, validated there)
into one immutable value.

Thread-safety: immutable.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkacore.config import BrokerConfig
from kafkacore.config.broker_defs import BALANCER_GOALS

__all__ = ["BALANCER_GOALS", "BalancerConfig"]


@dataclass(frozen=True, slots=True)
class BalancerConfig:
    """``auto.partition.balance.*``: whether the balancer runs or is paused, how often it
    looks, its goals in priority order, the tolerances (percent of the mean) of the
    replica, leader, broker-disk and log-dir goals, the disk high-water mark (percent
    used), how many moves may run at once, the cool-down, the replication throttle of its
    moves (bytes/s) and the brokers being drained."""

    enabled: bool = False
    paused: bool = False
    interval_ms: int = 10_000
    goals: tuple[str, ...] = BALANCER_GOALS
    replica_imbalance_percentage: int = 10
    leader_imbalance_percentage: int = 10
    disk_imbalance_percentage: int = 10
    log_dir_imbalance_percentage: int = 20
    disk_high_water_mark_percentage: int = 85
    max_moves_in_flight: int = 2
    cooldown_ms: int = 30_000
    throttle_bytes_per_second: int = 10 * 1024 * 1024
    decommissioned: frozenset[int] = frozenset()

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> BalancerConfig:
        return cls(
            enabled=config.auto_partition_balance_enable,
            paused=config.auto_partition_balance_paused,
            interval_ms=config.auto_partition_balance_interval_ms,
            goals=tuple(config.auto_partition_balance_goals),
            replica_imbalance_percentage=config.auto_partition_balance_replica_imbalance_percentage,
            leader_imbalance_percentage=config.auto_partition_balance_leader_imbalance_percentage,
            disk_imbalance_percentage=config.auto_partition_balance_disk_imbalance_percentage,
            log_dir_imbalance_percentage=(
                config.auto_partition_balance_log_dir_imbalance_percentage
            ),
            disk_high_water_mark_percentage=(
                config.auto_partition_balance_disk_high_water_mark_percentage
            ),
            max_moves_in_flight=config.auto_partition_balance_max_moves_in_flight,
            cooldown_ms=config.auto_partition_balance_cooldown_ms,
            throttle_bytes_per_second=config.auto_partition_balance_throttle_bytes_per_second,
            decommissioned=frozenset(
                int(b) for b in config.auto_partition_balance_decommissioned_brokers
            ),
        )
