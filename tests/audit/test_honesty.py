"""A verdict never says more than the audit saw: the honesty cases, claims their own accounting contradicts (a stated
curve never does), users' own claim objects, one row record and one verdict function, committed results
recertified from their counts."""

import ast
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

import pgc.schemas as schemas
from audit.certification.claims import accountant_contradiction, contradiction, mechanism_claim
from audit.certification.curves import gdp_mu_for
from audit.engine.blackbox import audit_mechanism
from audit.engine.recertify import recertify
from audit.selftest.honesty import HONESTY_CASES, run_honesty_cases
from pgc.contracts import PrivacyClaim
from pgc.schemas.audit_rows import AuditRow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(HONESTY_CASES))
def test_honesty_case_gets_its_expected_verdict(case):
    (outcome,) = run_honesty_cases(seed=0, only=[case])
    assert outcome.passed, f"{case}: expected {outcome.expected}; shown {outcome.shown}"


@pytest.mark.parametrize("name, epsilon", [("toy-grr", 0.25), ("toy-oue", 1.0)])
def test_correct_frequency_oracles_at_small_epsilon_stay_consistent(name, epsilon):
    """Power is claimed where the test separated the values: a correct GRR at ε 0.25 or OUE at ε 1 at 1e5 per
    side keeps a consistent verdict (no blanket 'inconclusive')."""
    from audit import audit_system
    from pgc.systems.registry import make_system

    row = audit_system(make_system(name, epsilon=epsilon), 0, 24, samples=100_000, seed=4, channels=["report"]).rows[0]
    assert row.verdict == "consistent" and 0.5 * epsilon < row.epsilon_lower_bound <= epsilon
    assert epsilon < row.detectable_epsilon < 2 * epsilon


RR_MU = float(2 * norm.ppf(np.e / (1 + np.e)))  # randomized response at ε = 1 is μ-GDP at this μ (1.232)


def test_pure_one_dp_is_the_stated_gdp_curve_so_both_promises_hold_at_once():
    """f_{1,0} ≥ G_μ at μ = 2Φ⁻¹(e/(1+e)) (they touch at the symmetric point): a (1, 0)-DP mechanism is μ-GDP, though
    μ-GDP alone allows no finite ε at δ = 0."""
    alpha = np.linspace(0.0, 1.0, 200_001)
    pure = np.maximum.reduce([np.zeros_like(alpha), 1 - np.e * alpha, np.exp(-1.0) * (1 - alpha)])
    gaussian = norm.cdf(norm.ppf(1 - alpha) - RR_MU)
    assert (pure - gaussian).min() > -1e-9 and abs(RR_MU - 1.2319) < 1e-3


def test_a_stated_curve_never_contradicts_its_claim():
    """Every stated promise bounds what the release reveals: a curve looser than the (ε, δ) at δ is no
    contradiction (both hold for the mechanism above); each is tested by its own test."""
    assert contradiction(PrivacyClaim(1.0, 0.0, ("x",), gdp_mu=RR_MU)) is None  # pure ε beside a true μ
    assert contradiction(PrivacyClaim(2.0, 1e-5, ("x",), gdp_mu=0.752)) is None  # μ allows ε = 3.16 at 1e-5
    assert contradiction(PrivacyClaim(1.99, 1e-5, ("x",), gdp_mu=gdp_mu_for(2.0, 1e-5))) is None
    profile = ((0.0, 0.3), (1.0, 1e-3), (2.0, 1e-5), (3.0, 1e-7))
    assert contradiction(PrivacyClaim(1.0, 1e-5, ("x",), privacy_profile=profile)) is None


def test_a_true_pure_claim_stating_its_true_curve_is_not_violated():
    @dataclass(frozen=True)
    class LaplaceStatingItsCurve:
        epsilon: float = 1.0
        clip: float = 0.01
        gdp_mu: float = RR_MU  # true of this mechanism (the test above)

        def __call__(self, g, rng):
            clipped = g / np.maximum(1.0, np.abs(g).sum(axis=1, keepdims=True) / (self.clip / 2))
            return clipped + rng.laplace(0.0, self.clip / self.epsilon, size=g.shape)

    for seed in range(2):
        res = audit_mechanism(LaplaceStatingItsCurve(), dim=2, samples=2000, seed=seed, delta_test_samples=0)
        assert res.verdict != "violated" and res.row.claim_contradiction is None, res.reason


def test_the_accountant_contradicts_a_claim_it_exceeds():
    assert accountant_contradiction(PrivacyClaim(2.0, 1e-5), 2.0 * (1 + 5e-4)) is None  # within the tolerance
    assert "gives ε = 3.16" in accountant_contradiction(PrivacyClaim(2.0, 1e-5), 3.158)
    assert "gives ε = 9 at δ = 0" in accountant_contradiction(PrivacyClaim(2.0, 0.0), 9.0)  # pure ε: accounted too
    assert contradiction(PrivacyClaim(2.0, 1e-5, ("x",), gdp_mu=0.752), 3.16).startswith(
        "the claim contradicts its own accounting"
    )


def test_the_curve_a_mechanism_audit_tests_is_the_one_it_states_never_its_noise():
    @dataclass(frozen=True)
    class Declares:  # declares its noise, states no curve
        epsilon: float = 2.0
        delta: float = 1e-5
        clip: float = 1.0
        noise_scale: float = 0.5

    assert mechanism_claim(Declares()).gdp_mu is None
    from pgc.mechanisms import Gaussian

    mech = Gaussian(2.0, 1e-5, clip=1.0)
    assert mechanism_claim(mech).gdp_mu == pytest.approx(gdp_mu_for(2.0, 1e-5), rel=1e-9)  # what it promises
    from audit import audit_mechanism
    from audit.selftest import mutants

    shrunk = audit_mechanism(mutants.GaussianNoiseShrunk(2.0, 1e-5, clip=1.0), samples=20_000, seed=1).row
    assert shrunk.claimed_mu == pytest.approx(gdp_mu_for(2.0, 1e-5), rel=1e-9)  # not the shrunk noise's 0.752
    assert shrunk.verdict == "violated" and shrunk.accountant_epsilon == pytest.approx(3.158, abs=1e-3)


USER_SYSTEM = """
from dataclasses import dataclass
import numpy as np

@dataclass(frozen=True)
class MyClaim:
    epsilon: float
    delta: float
    covers: tuple
    gdp_mu: float | None = None

class MySystem:
    name = "user-gaussian"
    channels = ("value",)

    def __init__(self, claim):
        self.claim = claim

    def release(self, secret, n, rng, *, broadcast=None):
        return {"value": float(secret) + rng.normal(0.0, 2.0, size=(n, 1))}

    def canaries(self):
        return {"0 vs 1": (0.0, 1.0)}

def make():
    return MySystem(MyClaim(1.0, 1e-5, ("value",), gdp_mu=0.5))

def without_covers():
    class Bare:
        epsilon, delta = 1.0, 1e-5
    return MySystem(Bare())
"""


def test_a_users_own_claim_object_works_from_python_and_the_cli(tmp_path, capsys):
    from audit import audit_system
    from pgc.cli.main import main

    module = tmp_path / "mysys.py"
    module.write_text(USER_SYSTEM)
    out = tmp_path / "a.json"
    assert main(["audit", "--system", f"{module}:make", "--samples", "4000", "--out", str(out), "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert data["claim"]["gdp_mu"] == 0.5 and data["rows"][0]["claimed_mu"] == 0.5
    assert main(["audit", "--system", f"{module}:without_covers", "--out", str(tmp_path / "b.json")]) == 2
    err = capsys.readouterr().err
    assert "a claim needs epsilon, delta and covers" in err and err.count("\n") == 1
    assert not (tmp_path / "b.json").exists()
    import importlib.util

    spec = importlib.util.spec_from_file_location("mysys", module)
    mysys = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mysys)
    res = audit_system(mysys.make(), 0.0, 1.0, samples=2_000)
    assert res.claim.gdp_mu == 0.5 and res.rows[0].claimed_mu == 0.5


def _committed_rows():
    for path in sorted((ROOT / "results").rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("kind") in ("audit", "system-audit", "flower-one-run"):
            result = schemas.load(data, where=str(path))
            profile = result.claim.privacy_profile if data["kind"] == "system-audit" else None
            for row in getattr(result, "channels", None) or result.rows:
                yield path, row, profile


def test_every_committed_row_recertifies_from_its_counts_with_its_verdict():
    from audit.verdicts import family_verdict

    rows, families = 0, {}
    for path, row, profile in _committed_rows():
        again, identical = recertify(row, profile)
        assert identical, f"{path.name} [{row.channel}]: bounds differ from the counts"
        assert (again.verdict, again.verdict_reason) == (row.verdict, row.verdict_reason), (
            f"{path.name} [{row.channel}]"
        )
        families.setdefault(path, []).append(again)
        rows += 1
    assert rows > 300
    for path, judged in families.items():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["kind"] == "system-audit":
            assert family_verdict(judged, 1.0 - data["confidence"]).verdict == data["verdict"], path.name


def test_one_row_type_per_result_kind_and_one_verdict_function():
    """Every result kind that holds audit rows holds a kind of the one row record (schemas.CertifiedRow): a channel
    audit's AuditRow, a self-test's SelfTestRow, a one-run audit's OneRunRow; the source decides a row's verdict in
    one function (audit.verdicts.decide) and builds no other row record."""
    import dataclasses
    import typing

    from pgc.schemas.audit_rows import ROW_KINDS, CertifiedRow, OneRunRow, SelfTestRow

    assert all(issubclass(kind, CertifiedRow) for kind in ROW_KINDS)
    holders = {}
    for kind, cls in schemas.SCHEMAS.items():
        for name, tp in typing.get_type_hints(cls).items():
            if any(row.__name__ in str(tp) for row in ROW_KINDS):
                holders[kind] = name
    assert typing.get_type_hints(schemas.OneRunAudit)["channels"] == list[OneRunRow]
    assert typing.get_type_hints(schemas.SelfTest)["channels"] == list[SelfTestRow]
    own = {kind.KIND: "channels" for kind in schemas.AUDIT_KINDS}
    assert holders == {
        **own,
        "system-audit": "rows",
        "flower-one-run": "rows",
        "opacus-one-run": "rows",
        "bench-flower": "rows",  # the Flower path's row and the numpy reference's, whole
    }
    assert typing.get_type_hints(schemas.AdversarialAudit)["channels"] == list[schemas.AdversarialModelRow]
    assert typing.get_type_hints(schemas.FlowerBench)["rows"] == dict[str, AuditRow]
    records = {
        c
        for c in vars(schemas).values()
        if isinstance(c, type)
        and dataclasses.is_dataclass(c)
        and {"epsilon_lower_bound", "verdict"} <= {f.name for f in dataclasses.fields(c)}
    }
    # the one row record (and its kinds); a benchmark's or a study's per-audit summary copies its audit row's verdict
    # and bound, typed as the one Verdict enum: pgc bench ldp's cell, pgc bench gaussian's shrunk noise, pgc bench
    # flower's seeds, the small-ε Laplace cells, the power study's miscalibrated, false-alarm and profile runs, and
    # pgc bench catalogue's and pgc bench shapes' cells
    summaries = {c for c in records if not issubclass(c, CertifiedRow)}
    assert {c.__name__ for c in summaries} <= {
        "LdpBenchCell",
        "ShrunkNoise",
        "SeedRow",
        "SmallEpsilonCell",
        "MiscalibratedRow",
        "FalseAlarmRow",
        "ProfileRun",
        "CellAudit",
        "FirstPairAudit",
        "OursPairChoice",
        "ShapeCell",
    }, records
    # (None where a cell was not audited: its status says why)
    assert all(typing.get_type_hints(c)["verdict"] in (schemas.Verdict, schemas.Verdict | None) for c in summaries)
    deciders = []
    for path in ROOT.glob("*/**/*.py"):
        if path.parts[len(ROOT.parts)] in ("tests", ".venv", "results", "scripts"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(n, ast.Return)
                and isinstance(n.value, ast.Tuple)
                and n.value.elts
                and isinstance(n.value.elts[0], ast.Attribute)
                and isinstance(n.value.elts[0].value, ast.Name)
                and n.value.elts[0].value.id == "Verdict"
                for n in ast.walk(node)
            ):
                deciders.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert deciders == ["audit/verdicts.py:decide"], deciders
    strings = [
        f"{path.relative_to(ROOT)}"
        for path in ROOT.glob("*/**/*.py")
        if path.parts[len(ROOT.parts)] not in ("tests", ".venv") and "via unprotected channel" in path.read_text()
    ]
    assert not strings, strings
    assert math.isfinite(1.0)
