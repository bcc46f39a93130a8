"""A Flower ClientApp that trains with Opacus (examples/flower/opacus_app.py), audited through Flower's Message path:
its claim is the module's own (Opacus's accountant), its releases are Opacus's DP-SGD updates, reproducible from the
audit's seed, beside the number of examples the reply states (a channel the claim does not cover)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audit import audit_system
from pgc.flower.loader import flower_client_from_spec
from pgc.opacus.claims import opacus_epsilon

APP = Path(__file__).resolve().parents[3] / "examples" / "flower" / "opacus_app.py"


@pytest.mark.slow
def test_an_opacus_client_app_is_audited_through_flowers_messages():
    system = flower_client_from_spec(f"{APP}:app")
    system.workers = 1
    assert system.claim.epsilon == pytest.approx(opacus_epsilon("prv", 0.1, 1.0, 1, 1e-5))
    first = system.release("D", 40, np.random.default_rng(3))["update"]
    again = system.release("D", 40, np.random.default_rng(3))["update"]
    assert first.shape == (40, 22) and np.array_equal(first, again)  # Opacus's noise seeded from the audit's stream
    assert np.std(first, axis=0).min() > 0.1  # noise σ·C·lr = 0.5 on every coordinate
    # the reply states how many records trained: 100 against 99, beside the update, outside Opacus's claim
    assert system.channels == ("update", "num_examples") and system.claim.covers == ("update",)
    assert np.all(system.release("D-removed", 5, np.random.default_rng(3))["num_examples"] == 99)
    result = audit_system(system, "D", "D-removed", samples=300, seed=0)
    assert result.row("update").verdict != "violated"
    assert result.row("num_examples").verdict == "unprotected channel"
