"""The checkers on small hand-written histories: each anomaly is counted where it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chaos.check import check, main, read_history


def history(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    base: list[dict[str, Any]] = [
        {"t": 0, "type": "meta", "seed": 7},
        {"t": 1, "type": "send", "value": "a", "partition": 0},
        {"t": 1, "type": "send", "value": "b", "partition": 0},
        {"t": 2, "type": "ack", "value": "a", "partition": 0, "offset": 0},
        {"t": 2, "type": "ack", "value": "b", "partition": 0, "offset": 1},
        {"t": 3, "type": "read", "consumer": 0, "partition": 0, "offset": 0, "value": "a"},
        {"t": 3, "type": "committed", "partition": 0, "offset": 1},
        {"t": 9, "type": "final", "partition": 0, "offset": 0, "value": "a"},
        {"t": 9, "type": "final", "partition": 0, "offset": 1, "value": "b"},
        {"t": 9, "type": "replica", "broker": 1, "partition": 0, "batches": [[0, 1, 42]]},
        {"t": 9, "type": "replica", "broker": 2, "partition": 0, "batches": [[0, 1, 42]]},
    ]
    return base + list(extra)


def test_a_clean_history() -> None:
    result = check(history())
    assert (result.acked, result.lost, result.duplicated, result.diverged) == (2, 0, 0, 0)
    assert result.ok and result.seed == 7


def test_a_lost_write() -> None:
    events = [e for e in history() if not (e["type"] == "final" and e["value"] == "b")]
    result = check(events)
    assert result.lost == 1 and not result.ok
    assert result.examples["lost"] == [{"value": "b", "partition": 0, "offset": 1}]


def test_an_unacknowledged_send_is_not_lost() -> None:
    result = check(history({"t": 4, "type": "send", "value": "c", "partition": 0}))
    assert result.lost == 0 and result.ok


def test_a_duplicate() -> None:
    result = check(history({"t": 9, "type": "final", "partition": 0, "offset": 2, "value": "b"}))
    assert result.duplicated == 1 and not result.ok


def test_replicas_that_diverge() -> None:
    result = check(
        history({"t": 9, "type": "replica", "broker": 3, "partition": 0, "batches": [[0, 1, 43]]})
    )
    assert result.replica_batch_mismatches == 2 and result.diverged == 2


def test_a_lagging_replica_is_not_divergent() -> None:
    result = check(
        history(
            {
                "t": 9,
                "type": "replica",
                "broker": 3,
                "partition": 0,
                "batches": [[0, 1, 42], [2, 2, 5]],
            }
        )
    )
    assert result.diverged == 0


def test_a_read_that_disagrees_with_the_log() -> None:
    result = check(
        history({"t": 3, "type": "read", "consumer": 1, "partition": 0, "offset": 1, "value": "x"})
    )
    assert result.inconsistent_offsets == 1 and result.diverged == 1


def test_a_committed_offset_going_back() -> None:
    result = check(history({"t": 5, "type": "committed", "partition": 0, "offset": 0}))
    assert result.commit_regressions == 1 and not result.ok


def test_recovery_figures() -> None:
    result = check(
        history(
            {"t": 10, "type": "fault", "kind": "kill", "broker": 1, "leads": [0]},
            {"t": 10.5, "type": "send", "value": "c", "partition": 0},
            {"t": 14, "type": "recovery", "partition": 0, "seconds": 3.5},
            {"t": 15, "type": "ack", "value": "c", "partition": 0, "offset": 2},
            {"t": 19, "type": "final", "partition": 0, "offset": 2, "value": "c"},
        )
    )
    assert result.faults == 1 and result.recoveries == [3.5]
    assert result.write_recoveries == [5.0]


def test_the_command_line(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in history()) + '{"t": 1, "ty', "utf-8")
    assert len(read_history(path)) == len(history())  # a torn last line is skipped
    assert main([str(path)]) == 0
    assert "lost=0" in capsys.readouterr().out
