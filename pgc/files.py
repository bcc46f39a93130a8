"""Files every writer shares: the JSON encoding of numbers (infinity and NaN as the strings "inf", "-inf", "nan"),
JSON-safe values, and atomic writes (a temporary file beside the target, then a rename: a reader never sees half
a file). Folders and their locks are :mod:`pgc.outdirs`.

The standard library only: every command may import it, at no start-up cost.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pgc.interrupts import raise_if_interrupted


def json_number(x: float) -> float | str:
    """A float as JSON writes it: finite as is, infinite and NaN as "inf", "-inf", "nan"."""
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def json_safe(obj):
    """A JSON-ready copy: numpy arrays and scalars as Python values, non-finite floats as "inf",
    "-inf", "nan" (JSON has none), paths and keys as strings."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if type(obj).__name__ == "ndarray" and hasattr(obj, "tolist"):  # numpy, not imported here
        return json_safe(obj.tolist())
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # numpy (or torch) scalars
        try:
            obj = obj.item()
        except (AttributeError, ValueError):
            return str(obj)
    if isinstance(obj, float):
        return json_number(obj)
    return obj


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that takes a file name (``np.savez``, ``torch.save``,
    ``Figure.savefig``): renamed onto ``path`` when the block ends, removed if it raises. ``suffix`` ends the
    temporary name (a writer that appends its own extension needs it). The file gets the usual permissions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp" + suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        raise_if_interrupted()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write to a temporary file beside ``path``, then rename (:func:`atomic_path`): readers never see half a file.
    The file gets the usual permissions (0666 & ~umask), not mkstemp's 0600."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Atomic write of text (temporary file, then rename) with the usual permissions."""
    return write_bytes_atomic(path, text.encode())


def write_json_atomic(path: str | Path, data) -> Path:
    """Atomic write of JSON (numbers made JSON-safe: :func:`json_safe`)."""
    return write_text_atomic(path, json.dumps(json_safe(data), indent=2, sort_keys=False) + "\n")


def read_json(path: str | Path):
    """A JSON file's content; a missing file is a FileNotFoundError, a damaged one a one-line UserError."""
    from pgc.errors import UserError

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
