"""Ctrl-C that always ends a command, and never after a half-done one has published its result.

Python turns SIGINT into a ``KeyboardInterrupt`` raised wherever the main thread runs. Raised inside a weakref
callback or a ``__del__`` (importlib runs one on every module lock it drops), it cannot propagate: Python prints it
as "Exception ignored" and the command carries on; caught by a library's bare ``except:``, it vanishes. Either way
the command would go on to write its result and exit 0. Once :func:`install` has run (the ``pgc`` console script
does it first), SIGINT is remembered as well as raised: an interrupt swallowed in a callback is raised again a few
milliseconds later, outside it, and :func:`raise_if_interrupted`, which every atomic write of :mod:`pgc.files` and
:mod:`pgc.outdirs` calls before it renames its file into place, stops a command that was interrupted at any moment
from publishing anything. Standard library only: it runs before anything else is imported.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
from types import FrameType
from typing import Any

_REDELIVERY_DELAY_S = 0.005  # long enough to leave the callback that swallowed the interrupt
_received = threading.Event()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    _received.set()
    raise KeyboardInterrupt


def _redeliver_swallowed_interrupt(unraisable: Any) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        import _thread

        timer = threading.Timer(_REDELIVERY_DELAY_S, _thread.interrupt_main)
        timer.daemon = True
        timer.start()
        return
    sys.__unraisablehook__(unraisable)


def install() -> None:
    """On SIGINT, remember it and raise ``KeyboardInterrupt``; raise it again where a callback swallowed it."""
    signal.signal(signal.SIGINT, _raise_interrupt)
    sys.unraisablehook = _redeliver_swallowed_interrupt


def raise_if_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` if this process has received SIGINT since :func:`install`: called before a
    result is renamed into place, so that an interrupt some library swallowed still stops the command there."""
    if _received.is_set():
        raise KeyboardInterrupt


def ignore_from_now_on() -> None:
    """The command has done its work and flushed its output: a Ctrl-C during the interpreter's shutdown no longer
    changes the outcome (Python restores the default action before its last clean-up, which would end the process
    by SIGINT, silently, and lose the exit code)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def command_label(argv: list[str]) -> str:
    """``pgc <command>`` as the user typed it, before the command table is loaded; ``pgc`` without one."""
    first = argv[0] if argv else ""
    return f"pgc {first}" if re.fullmatch(r"[a-z][a-z0-9-]*", first) else "pgc"
