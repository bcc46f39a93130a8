"""Small helpers shared by the commands: atomic JSON, output folders, JSON-safe numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reports.files import json_safe, write_bytes_atomic

__all__ = ["json_safe", "read_json", "write_json_atomic", "write_text_atomic"]


def write_text_atomic(path: Path, text: str) -> Path:
    """Atomic write (temporary file, then rename) with the usual permissions."""
    return write_bytes_atomic(path, text.encode())


def write_json_atomic(path: Path, data: Any) -> Path:
    return write_text_atomic(path, json.dumps(json_safe(data), indent=2, sort_keys=False) + "\n")


def read_json(path: Path) -> Any:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
