"""Progress of long audits: a tqdm bar on a terminal, plain dated lines elsewhere (a log file, CI, a pipe).

``progress_bar(total, unit, desc)`` returns an object with ``update(n)`` and ``close()``. When standard
error is a terminal it is a tqdm bar; otherwise it writes one line when the work starts and then one every
``LINE_INTERVAL_S`` seconds: what it does, how far it is, the time spent and an estimate of the time left.
"""

from __future__ import annotations

import sys
import time

LINE_INTERVAL_S = 30.0


class LineProgress:
    """Progress as plain lines on standard error (no carriage returns)."""

    def __init__(self, total: int, unit: str, desc: str, interval: float = LINE_INTERVAL_S, stream=None):
        self.total, self.unit, self.desc, self.interval = max(int(total), 1), unit, desc, interval
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.start = self.last = time.perf_counter()
        self._write(f"{desc}: started, {self.total:,} {unit}s to go")

    def update(self, n: int = 1) -> None:
        self.done += int(n)
        now = time.perf_counter()
        if now - self.last >= self.interval:
            self.last = now
            elapsed = now - self.start
            left = elapsed * (self.total - self.done) / self.done if self.done else float("nan")
            self._write(f"{self.desc}: {100 * self.done / self.total:.0f}% ({self.done:,}/{self.total:,} {self.unit}s), "
                        f"{_duration(elapsed)} elapsed, about {_duration(left)} left")

    def close(self) -> None:
        pass

    def _write(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", file=self.stream, flush=True)


class NullProgress:
    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


def progress_bar(total: int, unit: str, desc: str, enabled: bool = True):
    """A tqdm bar on a terminal, :class:`LineProgress` elsewhere, nothing when not ``enabled``."""
    if not enabled:
        return NullProgress()
    if sys.stderr.isatty():
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, unit_scale=True, mininterval=0.5, leave=False, desc=desc)
    return LineProgress(total, unit, desc)


def _duration(seconds: float) -> str:
    if seconds != seconds:  # nan
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"
