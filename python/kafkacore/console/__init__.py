"""kafkacore's web console (``kafkacore[console]``): server-rendered pages (Starlette +
Jinja2, htmx for partial swaps, uPlot for charts, server-sent events for live data) over a
Kafka-protocol cluster.

Two ways to run it:

* beside the broker, on the broker's own event loop: ``console.listeners=http://127.0.0.1:8080``
  (off by default; :func:`start_beside`, started by ``kafkacore server-start`` and by
  :class:`~kafkacore.embedded.EmbeddedBroker` once the broker's listeners are bound, seeing
  the broker through a :class:`~kafkacore.console.broker_view.BrokerView`);
* as a separate process against any cluster, Apache Kafka's too:
  ``kafkacore console --bootstrap-server H:P`` (:mod:`kafkacore.cli.web_console`); the views
  that need the broker's own objects (its logs, counters) show a notice there.

The pieces: :mod:`~kafkacore.console.context` (:class:`ConsoleContext`, what every view is
given), :mod:`~kafkacore.console.app` (``VIEWS`` and :func:`create_app`),
:mod:`~kafkacore.console.auth` (login with the cluster's SASL credentials, signed session
cookie, CSRF), :mod:`~kafkacore.console.audit` (every change as a JSON record in the audit
topic), ``views/*`` (one module per page group).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkacore.console.serve import ConsoleServer, run_standalone, start_beside

if TYPE_CHECKING:
    from kafkacore.console.context import ConsoleContext, Login

__all__ = ["ConsoleContext", "ConsoleServer", "Login", "run_standalone", "start_beside"]


def __getattr__(name: str) -> Any:
    # The context needs the console's optional dependencies (Starlette, Jinja2): imported
    # when asked for, so that start_beside can name what is missing.
    if name in ("ConsoleContext", "Login"):
        from kafkacore.console import context

        return getattr(context, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
