"""A library release an adapter cannot read is refused in one line naming the release; ``pgc bench versions``
records what each release did without installing anything here."""

from __future__ import annotations

import importlib
from importlib import metadata

import numpy as np
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


def test_older_multi_freq_ldpy_layouts_are_read_or_refused_by_name(monkeypatch):
    """Before 0.2.5 LH_Client takes no k, and HE (0.2.5) and SS (0.2.4) are absent: the adapter calls the client it
    finds, and refuses a protocol whose client is missing in one line naming the release."""
    from pgc.errors import UserError
    from pgc.ldp import mfl_clients

    calls = []
    monkeypatch.setattr(mfl_clients, "LH_TAKES_K", False)
    monkeypatch.setattr(mfl_clients, "LH_Client", lambda v, eps, optimal: calls.append((v, eps, optimal)) or (1, 7))
    olh = mfl_clients.PROTOCOLS["OLH"](25, 1.0)
    olh.client_block(np.array([3, 4]))
    assert calls == [(3, 1.0, True), (4, 1.0, True)]
    monkeypatch.setattr(mfl_clients, "SS_Client", None)
    monkeypatch.setattr(mfl_clients, "HE_Client", None)
    monkeypatch.setattr(metadata, "version", lambda name: "0.2.3")
    for name, since in (("SS", "0.2.4"), ("THE", "0.2.5")):
        with pytest.raises(UserError, match=rf"multi-freq-ldpy 0\.2\.3 has no .* install multi-freq-ldpy>={since}"):
            mfl_clients.PROTOCOLS[name](25, 1.0)
