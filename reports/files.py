"""JSON-safe values and atomic file writes, shared by the report writers and the CLI.

Kept free of heavy imports (no torch, no pgc): ``pgc report`` starts fast. (``pgc.a3c.rundir`` has its
own JSON conversion because ``pgc`` imports nothing from ``reports``.)
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np


def json_safe(obj):
    """A JSON-ready copy: numpy arrays and scalars as Python values, non-finite floats as "inf",
    "-inf", "nan" (JSON has none), paths and keys as strings."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # numpy (or torch) scalars
        try:
            obj = obj.item()
        except (AttributeError, ValueError):
            return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write to a temporary file beside ``path``, then rename: readers never see half a file. The
    file gets the usual permissions (0666 & ~umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
