"""Progress of long work, for every command: a tqdm bar on a terminal, plain dated lines elsewhere (a log
file, CI, a pipe).

``progress_bar(total, unit, desc)`` returns an object with ``update(n)`` and ``close()`` (also a context
manager). When standard error is a terminal it is a tqdm bar; otherwise :class:`LineProgress` writes one
line once the work has lasted :data:`START_DELAY_S` seconds and then one every :data:`LINE_INTERVAL_S`
seconds — from a timer, so a step that reports rarely still shows it is alive: what it does, how far it
is, the time spent and an estimate of the time left. ``PGC_PROGRESS_INTERVAL_S`` in the environment sets another
interval.

``silenced()`` turns every progress bar, progress line and heartbeat off for a block (a command's ``--no-progress``),
in this process and in the processes it starts (``PGC_PROGRESS=off`` in their environment); ``chosen(flag)`` applies
a command's choice, where an explicit ``--progress`` overrides an inherited ``PGC_PROGRESS=off``.

``heartbeat(label)`` covers the rest of a command: while no progress of this module is open and nothing
was written for :data:`LINE_INTERVAL_S` seconds, it writes ``[HH:MM:SS] label: working, … elapsed`` (a
heartbeat inside another, as a pipeline's steps, adds nothing).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator


def _interval_from_environment(default: float = 30.0) -> float:
    """``PGC_PROGRESS_INTERVAL_S`` (seconds between lines, > 0), else ``default``."""
    try:
        value = float(os.environ.get("PGC_PROGRESS_INTERVAL_S", default))
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


LINE_INTERVAL_S = _interval_from_environment()
START_DELAY_S = min(2.0, LINE_INTERVAL_S)  # off a terminal, work that ends sooner writes no line at all

# progress objects open in this process, heartbeats running (a command run inside another adds none), and
# when the last line was written
_state = {"open": 0, "beating": 0, "last_line": 0.0}
_lock = threading.Lock()
SILENCE_VARIABLE = "PGC_PROGRESS"  # "off": no progress at all (set by silenced() for the processes it starts)


def _silent() -> bool:
    return os.environ.get(SILENCE_VARIABLE) == "off"


_silencing: dict = {"blocks": 0, "before": None}  # silenced() blocks open (any thread), the variable before the first


@contextlib.contextmanager
def silenced(on: bool = True) -> Iterator[None]:
    """No progress bar, progress line or heartbeat inside the block (where ``on``), here and in the processes
    started from it; the environment as it was once the last such block, of any thread, has ended."""
    if not on:
        yield
        return
    with _lock:
        if _silencing["blocks"] == 0:
            _silencing["before"] = os.environ.get(SILENCE_VARIABLE)
            os.environ[SILENCE_VARIABLE] = "off"
        _silencing["blocks"] += 1
    try:
        yield
    finally:
        with _lock:
            _silencing["blocks"] -= 1
            if _silencing["blocks"] == 0:
                if _silencing["before"] is None:
                    os.environ.pop(SILENCE_VARIABLE, None)
                else:
                    os.environ[SILENCE_VARIABLE] = _silencing["before"]


@contextlib.contextmanager
def chosen(flag: bool | None) -> Iterator[None]:
    """A command's ``--progress`` (True), ``--no-progress`` (False) or neither (None) for a block: False silences
    it (:func:`silenced`); True shows progress even where the environment holds ``PGC_PROGRESS=off`` (the
    variable is removed for the block, here and in the processes started from it, and restored after); None
    leaves the environment to decide."""
    if flag is False:
        with silenced():
            yield
        return
    with _lock:
        before = os.environ.get(SILENCE_VARIABLE) if flag else None
        if before is not None:
            os.environ.pop(SILENCE_VARIABLE)
    try:
        yield
    finally:
        if before is not None:
            with _lock:
                os.environ[SILENCE_VARIABLE] = before


def wanted(flag: bool | None) -> bool:
    """Whether a command shows progress: its ``--progress``/``--no-progress``, else the environment's
    ``PGC_PROGRESS``."""
    return (not _silent()) if flag is None else bool(flag)


def _write_line(stream, text: str) -> None:
    with _lock:
        _state["last_line"] = time.monotonic()
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=stream, flush=True)


def _opened(delta: int) -> None:
    with _lock:
        _state["open"] = max(0, _state["open"] + delta)
        _state["last_line"] = time.monotonic()


class LineProgress:
    """Progress as plain dated lines on standard error (no carriage returns): one at the start, then one
    every ``interval`` seconds until :meth:`close`, whether or not ``update`` was called in between."""

    def __init__(
        self, total: int, unit: str, desc: str, interval: float | None = None, stream=None, timer: bool = True
    ):
        self.total, self.unit, self.desc = max(int(total), 1), unit, desc
        self.interval = LINE_INTERVAL_S if interval is None else interval
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.start = self.last = time.perf_counter()
        self._stop = threading.Event()
        self._line_lock = threading.Lock()
        self._has_started = False
        _opened(+1)
        self._thread = None
        if timer and self.interval > 0:  # the start line once the work has lasted START_DELAY_S: short steps stay quiet
            self._thread = threading.Thread(target=self._tick, daemon=True, name=f"progress: {desc}")
            self._thread.start()
        else:
            self._started()

    def _started(self) -> None:
        """The start line, once, before any other line of this progress."""
        with self._line_lock:
            if not self._has_started:
                self._has_started = True
                _write_line(self.stream, f"{self.desc}: started, {self.total:,} {self.unit}s to go")

    def update(self, n: int = 1) -> None:
        self.done += int(n)
        if time.perf_counter() - self.last >= self.interval:
            self._report()

    def _report(self) -> None:
        self._started()
        now = time.perf_counter()
        self.last = now
        elapsed = now - self.start
        left = elapsed * (self.total - self.done) / self.done if self.done else float("nan")
        _write_line(
            self.stream,
            f"{self.desc}: {100 * min(self.done, self.total) / self.total:.0f}% "
            f"({self.done:,}/{self.total:,} {self.unit}s), {_duration(elapsed)} elapsed, "
            f"about {_duration(left)} left",
        )

    def _tick(self) -> None:
        if self._stop.wait(min(START_DELAY_S, LINE_INTERVAL_S, self.interval)):
            return
        self._started()
        while not self._stop.wait(max(0.05, self.interval - (time.perf_counter() - self.last))):
            if time.perf_counter() - self.last >= self.interval:
                self._report()

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        _opened(-1)

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class NullProgress:
    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> NullProgress:
        return self

    def __exit__(self, *exc) -> None: ...


class _Bar:
    """A tqdm bar that counts as open progress (the heartbeat stays quiet while it shows)."""

    def __init__(self, bar):
        self.bar = bar
        _opened(+1)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
            _opened(-1)

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(total: int, unit: str, desc: str, enabled: bool = True):
    """A tqdm bar on a terminal, :class:`LineProgress` elsewhere, nothing when not ``enabled`` or
    :func:`silenced`."""
    if not enabled or _silent():
        return NullProgress()
    if sys.stderr.isatty():
        from tqdm import tqdm

        return _Bar(tqdm(total=total, unit=unit, unit_scale=True, mininterval=0.5, leave=False, desc=desc))
    return LineProgress(total, unit, desc)


@contextlib.contextmanager
def heartbeat(label: str, enabled: bool = True, interval: float | None = None, stream=None) -> Iterator[None]:
    """For the block: a dated ``label: working`` line whenever no progress is open and nothing was written
    for ``interval`` seconds (default :data:`LINE_INTERVAL_S`)."""
    interval = LINE_INTERVAL_S if interval is None else interval
    with _lock:
        nested = _state["beating"] > 0
    if not enabled or nested or _silent():
        yield
        return
    stream = stream if stream is not None else sys.stderr
    stop = threading.Event()
    start = time.perf_counter()
    with _lock:
        _state["last_line"] = time.monotonic()
        _state["beating"] += 1

    def beat() -> None:
        while not stop.wait(min(1.0, max(0.05, interval / 4))):
            with _lock:
                quiet = _state["open"] == 0 and time.monotonic() - _state["last_line"] >= interval
            if quiet and not _silent():  # a step silenced inside the command
                _write_line(stream, f"{label}: working, {_duration(time.perf_counter() - start)} elapsed")

    thread = threading.Thread(target=beat, daemon=True, name=f"heartbeat: {label}")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        with _lock:
            _state["beating"] -= 1


def progress_line(text: str, stream=None) -> None:
    """One dated line of what a command is doing, on standard error (as progress lines are); none when
    :func:`silenced`."""
    if _silent():
        return
    _write_line(stream if stream is not None else sys.stderr, text)


def _duration(seconds: float) -> str:
    if seconds != seconds:  # nan
        return "?"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"
