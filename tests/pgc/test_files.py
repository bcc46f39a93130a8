"""pgc.files: atomic writes leave either the old file or the whole new one, never a temporary file."""

from __future__ import annotations

import json
import math

import numpy
import pytest

from pgc.files import atomic_path, json_number, json_safe, write_json_atomic


def test_atomic_path_renames_on_success_and_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "sub" / "model.bin"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp != target
        tmp.write_bytes(b"new")
        assert not target.exists()
    assert target.read_bytes() == b"new"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"new" and sorted(p.name for p in target.parent.iterdir()) == ["model.bin"]


def test_atomic_path_keeps_a_suffix_a_writer_needs(tmp_path):
    with atomic_path(tmp_path / "a.npz", suffix=".npz") as tmp:
        assert tmp.name.endswith(".npz")
        tmp.write_bytes(b"x")
    assert (tmp_path / "a.npz").read_bytes() == b"x"


def test_json_numbers_and_values():
    assert [json_number(x) for x in (1.5, math.inf, -math.inf)] == [1.5, "inf", "-inf"]
    assert json_number(math.nan) == "nan"
    assert json_safe({1: numpy.array([1.0, numpy.inf]), "t": (numpy.float64(2.0),)}) == {"1": [1.0, "inf"], "t": [2.0]}


def test_write_json_atomic_writes_infinity_as_a_string(tmp_path):
    path = write_json_atomic(tmp_path / "r.json", {"eps": math.inf})
    assert json.loads(path.read_text()) == {"eps": "inf"}
