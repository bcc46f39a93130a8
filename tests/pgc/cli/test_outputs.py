"""Where a command's result file goes (pgc.cli.outputs.ResultFile): a default path new for every run, an
existing file replaced only with --force and only if pgc wrote it, its companions (θ files, a plot) kept
with it, missing parent folders created."""

from __future__ import annotations

import re

import pytest

from pgc.cli.outputs import ResultFile
from pgc.errors import UserError


def _result(result: ResultFile, theta_suffixes: list[str]) -> dict:
    names = {}
    for suffix in theta_suffixes:
        path = result.companion(suffix)
        path.write_bytes(b"theta")
        names[suffix] = path.name
    return {"kind": "audit", "adversarial_audits": [{"theta_files": names}]}


def test_defaults_are_new_for_every_run_and_never_in_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = []
    for _ in range(3):  # within one second: -2, -3
        with ResultFile(None, command="audit", name="mechanism") as result:
            result.write({"kind": "audit"})
            paths.append(result.path)
    assert len(set(paths)) == 3 and all(p.parent.as_posix() == "runs/audit" for p in paths)
    assert all(re.fullmatch(r"mechanism-\d{8}-\d{6}(-\d)?\.json", p.name) for p in paths)


def test_an_existing_result_is_replaced_only_with_force_and_its_old_companions_go(tmp_path):
    out = tmp_path / "new" / "folders" / "a.json"  # parents created
    with ResultFile(out, command="audit", name="x") as result:
        result.write(_result(result, ["-theta-5-15-gradient.pt", "-theta-5-15-score.pt"]))
    with pytest.raises(UserError, match="exists .*--force"):
        ResultFile(out, command="audit", name="x")
    with ResultFile(out, command="audit", name="x", force=True) as result:
        result.write(_result(result, ["-theta-9.7-9.9-gradient.pt"]))
    assert sorted(p.name for p in out.parent.iterdir()) == ["a-theta-9.7-9.9-gradient.pt", "a.json"]


def test_a_failed_command_leaves_neither_result_nor_companions(tmp_path):
    out = tmp_path / "a.json"
    with pytest.raises(RuntimeError), ResultFile(out, command="audit", name="x") as result:
        result.companion("-theta-5-15-gradient.pt").write_bytes(b"theta")
        raise RuntimeError("the audit failed")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", [b"my notes", b'{"no": "kind"}', b"[1, 2]"])
def test_force_never_replaces_a_file_pgc_did_not_write(tmp_path, content):
    out = tmp_path / "a.json"
    out.write_bytes(content)
    with pytest.raises(UserError, match="not a pgc result"):
        ResultFile(out, command="audit", name="x", force=True)
    assert out.read_bytes() == content


def test_a_folder_or_a_file_in_the_way_is_refused_in_one_line(tmp_path):
    (tmp_path / "d.json").mkdir()
    with pytest.raises(UserError, match="is a folder"):
        ResultFile(tmp_path / "d.json", command="audit", name="x")
    (tmp_path / "f").write_text("x")
    with pytest.raises(UserError, match="a file is in the way"):
        ResultFile(tmp_path / "f" / "a.json", command="audit", name="x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json", "f"]
