"""A library release an adapter cannot read is refused in one line naming the release; ``pgc bench versions``
records what each release did without installing anything here."""

from __future__ import annotations

import importlib
from importlib import metadata

import pytest


def test_an_unreadable_installed_release_is_named_with_what_the_adapter_reads(monkeypatch):
    from pgc.ldp import registry

    real = importlib.import_module

    def without_layout(name, *args, **kwargs):
        if name == registry.LIBRARY_MODULES["pure-ldp"]:
            raise ModuleNotFoundError("No module named 'pure_ldp.core'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(registry.importlib, "import_module", without_layout)
    monkeypatch.setattr(metadata, "version", lambda name: "1.0.0")
    with pytest.raises(ImportError) as refused:
        registry.protocols("pure-ldp")
    said = str(refused.value)
    assert "pure-ldp 1.0.0 is installed" in said and "pure-ldp >=1.1" in said and "\n" not in said


def test_the_version_bench_reports_a_release_that_does_not_install(monkeypatch, tmp_path, capsys):
    import argparse
    import json

    from pgc.benchmarks import versions

    monkeypatch.setattr(versions, "install", lambda library, release, folder: f"no release {release}")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    out = tmp_path / "matrix.json"
    code = versions.run(argparse.Namespace(only=["opacus"], timeout=10, out=str(out)))
    cells = json.loads(out.read_text())["cells"]
    assert code == 0 and [c["release"] for c in cells] == ["1.4.1", "1.5.4", "1.6.0"]
    assert all(not c["installed"] and c["said"].startswith("no release") for c in cells)
    assert "opacus           1.4.1   not installed: no release 1.4.1" in capsys.readouterr().out
