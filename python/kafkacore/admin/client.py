"""The admin client kafkacore's operations run over (Kafka's ``Admin``): confluent-kafka's
``AdminClient`` for what it does, plus one request at a time on a connection of its own
for the few requests it does not make (ListPartitionReassignments,
AlterPartitionReassignments and ElectLeaders to the controller, OffsetDelete to a group
coordinator).

Who sends those requests is the face's choice (:class:`RawSender`): the ``kafkacore``
tools open a blocking socket secured as ``--command-config`` says; the console uses the
broker's own async client, logged in as the console's user.

Thread-safety: an :class:`Admin` is as thread-safe as its two parts (confluent-kafka's
client is; a sender opens a connection per request). Every call blocks.
"""

from __future__ import annotations

import concurrent.futures
import importlib
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "TIMEOUT",
    "TP",
    "Admin",
    "AdminError",
    "ConnectionClosed",
    "RawSender",
    "ck_module",
    "error_text",
    "wait",
]

TIMEOUT = 30.0
"""Seconds an admin call may take (Kafka's tools' default request timeout)."""

TP = tuple[str, int]
"""A topic partition: ``(topic, partition)``."""


class AdminError(Exception):
    """A failed request, with the text Kafka's tools print for it (one line)."""


class ConnectionClosed(OSError):
    """The broker closed a raw request's connection before its whole answer arrived."""


class RawSender(Protocol):
    """Sends one request to ``host:port`` and returns the decoded response. Raises
    ``OSError`` when the connection fails (:class:`ConnectionClosed` when the broker
    closed it before answering)."""

    def __call__(self, host: str, port: int, api: str, version: int, request: Any, /) -> Any: ...


@dataclass(frozen=True)
class Admin:
    """Kafka's ``Admin`` as kafkacore's operations use it: ``client``, confluent-kafka's
    ``AdminClient`` (typed ``Any``: confluent-kafka is partly typed), and ``send`` for the
    requests it does not make."""

    client: Any
    send: RawSender


def ck_module(name: str) -> Any:
    """confluent-kafka (partly typed) as ``Any``."""
    return importlib.import_module(name)


def error_text(exc: BaseException) -> str:
    """The text of a confluent-kafka error (``KafkaError.str()``), else ``str(exc)``."""
    err = exc.args[0] if exc.args else exc
    text = err.str() if hasattr(err, "str") else str(err)
    return str(text)


def wait(future: Any) -> Any:
    """The result of an AdminClient future, or :class:`AdminError`."""
    try:
        if isinstance(future, concurrent.futures.Future):
            return future.result(timeout=TIMEOUT)
        return future.result()
    except AdminError:
        raise
    except Exception as exc:  # confluent_kafka.KafkaException and friends
        raise AdminError(error_text(exc)) from None
