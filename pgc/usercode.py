"""Whose code raised an exception: the user's (their system file, factory, ``release``, Flower ``client_fn``) or
pgc-audit's own.

An exception is classified by the frame that raised it: the innermost frame of its traceback that is not a
library's (the standard library's or an installed package's, other than pgc-audit's four packages) decides.
Library frames take the side of the code that called them: ``len(3)`` in a user's factory is the user's, an
adapter's call into a library that raises is pgc-audit's. A user's file is any source file outside pgc-audit's
packages, its repository's ``scripts/`` and the interpreter's library folders, plus the module a
``--system``/``--flower``/``--nvflare`` SPEC named (:func:`note_user_module`), even when it is installed.

Exceptions re-raised from a worker process (``concurrent.futures`` and ``multiprocessing`` attach the worker's
traceback as text to ``__cause__``) are classified from that text.

:func:`user_code_failure` returns a :class:`UserCodeFailure` (the user's frames and the one line naming the call,
``my.py:make → S.release raised ZeroDivisionError: division by zero``) or None when the exception is not the
user's.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

OUR_PACKAGES = ("audit", "attacks", "pgc", "reports")
# the repository's own command scripts (a source checkout only: the wheel ships the packages alone)
OUR_SCRIPTS = "scripts"
_ROOT = Path(__file__).resolve().parent.parent
_OURS = tuple(str(_ROOT / name) + os.sep for name in (*OUR_PACKAGES, OUR_SCRIPTS))
_LIBRARY = tuple(
    sorted(
        {
            os.path.realpath(p) + os.sep
            for key in ("stdlib", "platstdlib", "purelib", "platlib")
            if (p := sysconfig.get_paths().get(key))
        }
        | {os.path.realpath(p) + os.sep for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)}
    )
)
# files of modules a user named in a SPEC (module file → the SPEC as the user wrote it)
_USER_MODULES: dict[str, str] = {}
_REMOTE_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')


def note_user_module(module: object, spec: str) -> None:
    """Record that ``module`` (loaded for ``spec``) is the user's code, wherever it is installed."""
    file = getattr(module, "__file__", None)
    if file:
        path = os.path.realpath(file)
        _USER_MODULES.pop(path, None)  # the latest SPEC last
        _USER_MODULES[path] = spec


def user_module_files() -> dict[str, str]:
    """The files of the modules the user named in a SPEC (file → the SPEC), in the order they were named."""
    return {path: spec for path, spec in _USER_MODULES.items() if os.path.isfile(path)}


def _side(filename: str) -> str:
    """ "ours", "user" or "library" for a source file name."""
    if not filename or filename.startswith("<"):
        return "user" if filename in ("<stdin>", "<string>") else "library"
    path = os.path.realpath(filename)
    if path in _USER_MODULES:
        return "user"
    if path.startswith(_OURS):
        return "ours"
    if path.startswith(_LIBRARY):
        return "library"
    return "user"


@dataclass(frozen=True)
class UserCodeFailure:
    """An exception raised in a user's code: the frames of theirs it passed through and the call that raised."""

    frames: tuple[traceback.FrameSummary, ...]
    call: str  # ``my.py:make → S.release``
    error: str  # ``ZeroDivisionError: division by zero``

    @property
    def line(self) -> str:
        """The one line naming the call."""
        return f"{self.call} raised {self.error}"

    def frames_text(self) -> str:
        """The user's frames, most recent call last (no "Traceback" header: the rest of the traceback is not theirs)."""
        return "in your code (most recent call last):\n" + "".join(traceback.format_list(list(self.frames)))


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The exception's frames, outermost first; a worker process's frames (from ``__cause__``'s text) after them."""
    frames = list(traceback.extract_tb(exc.__traceback__)) if isinstance(exc.__traceback__, TracebackType) else []
    cause = exc.__cause__
    if cause is not None and type(cause).__name__ in ("_RemoteTraceback", "RemoteTraceback"):
        text = str(getattr(cause, "tb", cause))
        for line in text.splitlines():
            m = _REMOTE_FRAME.match(line)
            if m:
                file, lineno = m["file"], int(m["line"])
                frames.append(
                    traceback.FrameSummary(
                        file, lineno, m["name"].strip(), line=linecache.getline(file, lineno).strip() or None
                    )
                )
    return frames


def _qualname(frame: traceback.FrameSummary, exc: BaseException) -> str:
    """The function's qualified name where the traceback still holds its code object (``S.release``), else its name."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == frame.filename and tb.tb_lineno == frame.lineno and code.co_name == frame.name:
            return str(getattr(code, "co_qualname", code.co_name))
        tb = tb.tb_next
    return frame.name


def _error_text(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def user_code_failure(exc: BaseException) -> UserCodeFailure | None:
    """The user's part of ``exc`` when the frame that raised it is the user's code, else None (pgc-audit's)."""
    frames = _frames(exc)
    sides = [_side(f.filename) for f in frames]
    decided = [i for i, side in enumerate(sides) if side != "library"]
    if not decided or sides[decided[-1]] != "user":
        return None
    # the call into the user's code: the outermost user frame after the last frame of ours
    ours = [i for i in decided if sides[i] == "ours"]
    entry = next(i for i in decided if sides[i] == "user" and (not ours or i > ours[-1]))
    entry_frame = frames[entry]
    spec = _USER_MODULES.get(os.path.realpath(entry_frame.filename))
    function = _qualname(entry_frame, exc)
    if spec:
        call = f"{spec} → {function}"
    elif _USER_MODULES:  # a module the SPEC's module imported: the SPEC, then the function and its file
        call = f"{list(_USER_MODULES.values())[-1]} → {function} ({_shown_path(entry_frame.filename)})"
    else:
        call = f"{_shown_path(entry_frame.filename)} → {function}"
    return UserCodeFailure(
        tuple(f for f, side in zip(frames, sides, strict=True) if side == "user"), call, _error_text(exc)
    )


def _shown_path(filename: str) -> str:
    try:
        return os.path.relpath(filename)
    except ValueError:
        return filename
