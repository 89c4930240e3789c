"""The one door from Python to the page.

Python code in the lesson never touches the DOM. It calls :func:`emit` with an event
type (one of :data:`EVENTS`, the ones ``static/js/shared/protocol.js`` defines for Python) and a
payload dict; in the browser the worker installs a sink that converts the
payload (numpy arrays become ``{shape, dtype, data: TypedArray}``, transferred, never
nested JS arrays) and posts it to the page. In CPython nothing is installed, so events
are kept in :data:`recorded` where tests (and curious readers) can look at them.
"""

from __future__ import annotations

from typing import Any, Callable

#: The events Python sends, as named in static/js/shared/protocol.js (a test holds them equal).
EVENTS = ("arrays", "figure")

#: Installed by the worker at start-up: ``sink(event_type, payload)``.
_sink: Callable[[str, dict[str, Any]], None] | None = None

#: Events emitted while no sink is installed (CPython), oldest first, capped.
recorded: list[tuple[str, dict[str, Any]]] = []
_RECORD_CAP = 1000


def install_sink(sink: Callable[[str, dict[str, Any]], None] | None) -> None:
    """Route future events to *sink* (``None`` goes back to recording)."""
    global _sink
    _sink = sink


def emit(event_type: str, payload: dict[str, Any]) -> None:
    """Send one event to the page, or record it when there is no page."""
    if event_type not in EVENTS:
        raise ValueError(f"{event_type!r} is not an event the page knows; protocol.js defines {EVENTS}")
    if _sink is not None:
        _sink(event_type, payload)
        return
    recorded.append((event_type, payload))
    del recorded[:-_RECORD_CAP]
