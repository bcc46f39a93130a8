"""Where a command's result file goes (``pgc audit``, ``pgc attack``, ``pgc bandit``).

* Without ``--out`` the default is unique per run: ``runs/<command>/<name>-<YYYYMMDD-HHMMSS>.json``
  under the working folder (``-2``, ``-3`` ... when that name is taken), never a fixed path that a second
  run would replace, and never the repository's committed ``results/``.
* An ``--out`` ending in ``/`` is a folder (created if missing): the result gets the default's unique name
  inside it. An explicit ``--out`` that exists is replaced only with ``--force``, and only if it is a pgc result
  (a JSON object with a ``kind``); its missing parent folders are created.
* The files written beside a result (crafted θ checkpoints, a plot: its *companions*, named after it) go
  with it: a replaced result's recorded companions are removed once the new result is written, and the
  companions of a command that fails are removed with its nothing-written result.

The output lock (:func:`pgc.outdirs.output_lock`) is held for the whole command: a second writer of the same
file exits 2 at once.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from pathlib import Path

from pgc.errors import UserError
from pgc.files import write_json_atomic

RUNS = Path("runs")
COMPANION_KEYS = ("theta_file", "theta_files", "plot")  # where a result records the files beside it
MAX_RESULT_BYTES = 64 * 2**20


def default_result_path(command: str, name: str, suffix: str = ".json", folder: Path | None = None) -> Path:
    """``runs/<command>/<name>-<date>-<time><suffix>`` (or that name in ``folder``), with ``-2``, ``-3`` ... when
    a result, its lock or its plot already has that name."""
    from pgc.outdirs import lock_path

    stamp = f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder = RUNS / command if folder is None else folder
    for i in itertools.count(1):
        path = folder / (f"{stamp}{suffix}" if i == 1 else f"{stamp}-{i}{suffix}")
        if not any(os.path.lexists(p) for p in (path, lock_path(path), path.with_suffix(".png"))):
            return path
    raise AssertionError("unreachable")


def _is_pgc_result(path: Path) -> bool:
    try:
        if not path.is_file() or path.stat().st_size > MAX_RESULT_BYTES:
            return False
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("kind"), str)


def recorded_companions(path: Path) -> list[Path]:
    """The files a pgc result at ``path`` records beside it (plain names starting with its stem)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    names: set[str] = set()

    def walk(obj) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                if key in COMPANION_KEYS:
                    names.update(
                        v for v in (value.values() if isinstance(value, dict) else [value]) if isinstance(v, str)
                    )
                walk(value)
        elif isinstance(obj, list):
            for value in obj:
                walk(value)

    walk(data)
    return [
        path.parent / n
        for n in sorted(names)
        if n and os.path.basename(n) == n and n.startswith(path.stem) and n != path.name
    ]


class ResultFile:
    """The result file of one command run: checked before the work, locked while it runs, written once.

    ``with ResultFile(args.out, command="audit", name="mechanism", force=args.force) as result:`` ...
    ``result.companion("-theta.pt")`` names a file beside it, ``result.write(data)`` writes the JSON."""

    def __init__(
        self, out: str | os.PathLike | None, *, command: str, name: str, force: bool = False, suffix: str = ".json"
    ):
        self.default = out is None
        if out is not None and str(out).endswith(("/", os.sep)):  # a folder: a new result file inside it
            self.path = default_result_path(command, name, suffix, folder=Path(out))
        else:
            self.path = default_result_path(command, name, suffix) if out is None else Path(out)
        self.force = force
        self._written: list[Path] = []
        self._replaced: list[Path] = []
        self._lock = None
        self.check()

    def check(self) -> None:
        """Refuse a folder, an existing file without ``--force`` or a file pgc did not write; create the
        missing parent folders."""
        path = self.path
        if path.is_dir():
            raise UserError(f"--out {path} is a folder; give a file name")
        if os.path.lexists(path):
            if not self.force:
                raise UserError(f"{path} exists (use --force to replace it, or another --out)")
            if path.is_symlink() or not _is_pgc_result(path):
                raise UserError(f"{path} is not a pgc result file; refusing to replace it")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise UserError(f"cannot create the folder of {path}: a file is in the way") from None
        except OSError as exc:
            raise UserError(f"cannot create {path.parent}: {exc.strerror or exc}") from None

    def __enter__(self) -> ResultFile:
        from pgc.outdirs import output_lock

        self._lock = output_lock(self.path)
        self._lock.__enter__()  # a second writer of the same file exits 2 here, at once
        try:
            self.check()  # nobody wrote it while this command was starting
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        self._replaced = recorded_companions(self.path) if self.path.exists() else []
        return self

    def companion(self, suffix: str) -> Path:
        """A file beside the result named after it (``<stem><suffix>``), removed if the command fails."""
        path = self.path.with_name(self.path.stem + suffix)
        self._written.append(path)
        return path

    def write(self, data) -> Path:
        """Write the result (atomically), then drop the replaced result's companions this run did not rewrite."""
        write_json_atomic(self.path, data)
        for old in self._replaced:
            if old not in self._written:
                with contextlib.suppress(OSError):
                    old.unlink()
        self._written = []  # kept: they belong to the written result
        return self.path

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            for path in self._written:  # the command failed before its result was written
                with contextlib.suppress(OSError):
                    path.unlink()
        finally:
            self._lock.__exit__(exc_type, exc, tb)
