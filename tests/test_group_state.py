"""The classic group's state machine: Kafka's valid previous states (GroupMetadata.scala's
``validPreviousStates``), enforced on every transition."""

from __future__ import annotations

import itertools

import pytest

from kafkacore.server.group.group import Group, GroupState, IllegalGroupStateTransition

S = GroupState
KAFKA_VALID_PREVIOUS = {
    S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.EMPTY: {S.PREPARING_REBALANCE},
}


def _group_in(state: GroupState) -> Group:
    """A group walked to ``state`` through legal transitions only."""
    group = Group("g")
    path = {
        S.EMPTY: [],
        S.PREPARING_REBALANCE: [S.PREPARING_REBALANCE],
        S.COMPLETING_REBALANCE: [S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE],
        S.STABLE: [S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.STABLE],
        S.DEAD: [S.DEAD],
    }[state]
    for step in path:
        group.transition_to(step)
    return group


@pytest.mark.parametrize(("source", "target"), list(itertools.product(S, S)))
def test_every_transition_is_allowed_exactly_as_kafka_allows_it(
    source: GroupState, target: GroupState
) -> None:
    group = _group_in(source)
    if source in KAFKA_VALID_PREVIOUS[target]:
        group.transition_to(target)
        assert group.state is target
    else:
        with pytest.raises(IllegalGroupStateTransition, match=f"moving to {target.value}"):
            group.transition_to(target)
        assert group.state is source  # an illegal transition changes nothing


def test_states_carry_kafkas_names() -> None:
    assert [s.value for s in S] == [
        "Empty",
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
    ]
    assert S.STABLE == "Stable" and f"{S.PREPARING_REBALANCE}" == "PreparingRebalance"
    assert str(S.DEAD) == "Dead"
