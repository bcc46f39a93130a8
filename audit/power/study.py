"""Evidence for the curve audit and the stated power, written to results/power/ (``results/power/run.sh``).

Every audit here goes through :func:`audit.engine.system_audit.audit_system` (select on a training split,
certify on fresh releases, one verdict rule) on small Gaussian and Laplace systems defined below,
except the oracle reference of ``curve-vs-threshold`` (one-dimensional scores, the threshold chosen
on n training samples per side) and the sequential null simulation (the stopping rule of
:mod:`audit.certification.sequential` on one-dimensional scores, 2,000 runs). Studies:

* ``curve-vs-threshold`` — an exact Gaussian at (2, 1e-5) and (1, 1e-5): ``curve_epsilon`` and the
  threshold ε_LB of the same rows, 20 seeds, 1e5 (and 1e6 for (1, 1e-5)) per side;
* ``miscalibrated`` — noise sized for a sensitivity of 1e-4 on a vector of diameter 2, claiming
  (10, 1e-5), at 2e4 per side: with its μ-GDP curve on the claim, and with (10, 1e-5) only;
* ``false-alarms`` — correctly calibrated Gaussian mechanisms (the project's analytic calibration,
  diffprivlib's GaussianAnalytic, and the textbook formulas written here) over ε ∈ {0.5, 1, 2, 4, 8},
  δ ∈ {1e-5, 1e-8} and dimensions {1, 4, 16}: how many are flagged;
* ``detectability`` — five mechanisms: each run audits the correct release, reads the ``detectable_epsilon``
  its own certified test states (:mod:`audit.power.measured`) and audits a release leaking exactly that much,
  200 runs each: the share flagged (the promise is ≥ 0.8);
* ``point-mass-detectability`` — the δ test's stated point mass, planted in a Laplace mechanism: the share
  flagged;
* ``sequential-null`` — the stopping rule on exact Gaussians (true claims), 2,000 runs: the share
  flagged, with a one-sided binomial test of "rate ≤ α".
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

import pgc.schemas as schemas
import pgc.schemas.power_kinds as pw
from audit.certification.curves import curve_epsilon, gdp_mu_for, mu_lower_bound, select_curve_threshold, split_alpha
from audit.certification.sequential import sequential_curve_audit
from audit.engine.system_audit import audit_system
from pgc.contracts import PrivacyClaim
from pgc.files import write_text_atomic
from pgc.mechanisms.calibration import analytic_gaussian_sigma

ALPHA = 0.05


class GaussianRelease:
    """Release x + N(0, σ²I) for x ∈ {e₁, −e₁} (diameter 2); the claim (ε, δ) and, with ``curve``, μ = 2/σ_claim
    where σ_claim is the calibration the claim believes in; ``sigma`` is the noise actually added."""

    channels = ("value",)

    def __init__(
        self,
        name: str,
        sigma: float,
        claim_eps: float,
        delta: float,
        dim: int = 1,
        claimed_sigma: float | None = None,
        curve: bool = True,
        noise=None,
    ):
        self.name, self.sigma, self.dim = name, float(sigma), int(dim)
        mu = 2.0 / (claimed_sigma or sigma) if curve else None
        self.claim = PrivacyClaim(claim_eps, delta, ("value",), gdp_mu=mu)
        self.noise = noise  # a callable (n, dim, rng) -> noise, or None for numpy's normal

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict:
        x = np.zeros(self.dim)
        x[0] = float(secret)
        noise = self.noise(n, self.dim, rng) if self.noise else rng.normal(0.0, self.sigma, size=(n, self.dim))
        return {"value": x[None, :] + noise}

    def canaries(self) -> dict:
        return {"e1 vs -e1": (1.0, -1.0)}


class LaplaceRelease:
    """Release b + Lap(1/ε_leak) for b ∈ {0, 1}, claiming pure ε (δ = 0)."""

    channels = ("value",)

    def __init__(self, name: str, leak_eps: float, claim_eps: float):
        self.name, self.scale = name, 1.0 / leak_eps
        self.claim = PrivacyClaim(claim_eps, 0.0, ("value",))

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict:
        return {"value": float(secret) + rng.laplace(0.0, self.scale, size=(n, 1))}

    def canaries(self) -> dict:
        return {"0 vs 1": (0.0, 1.0)}


def _audit(system, n: int, seed: int):
    secret, secret_prime = next(iter(system.canaries().values()))
    return audit_system(system, secret, secret_prime, samples=n, seed=seed, channels=["value"], confidence=1.0 - ALPHA)


# ---- curve vs threshold -----------------------------------------------------------------------


def _oracle_seed(mu: float, delta: float, n: int, rng: np.random.Generator) -> float:
    """curve ε on one-dimensional scores: threshold chosen on n training samples, counted on n fresh."""
    curve_alpha = split_alpha(ALPHA)[1]
    neg, pos = rng.normal(0.0, 1.0, (2, n)), rng.normal(mu, 1.0, (2, n))
    t = select_curve_threshold(pos[0], neg[0], n, curve_alpha)
    mu_lb = mu_lower_bound(int((neg[1] >= t).sum()), int((pos[1] < t).sum()), n, n, curve_alpha)
    return curve_epsilon(mu_lb, delta)


def curve_vs_threshold(epsilon: float, delta: float, n: int, seeds: int, root: int) -> pw.CurveVsThreshold:
    sigma = analytic_gaussian_sigma(epsilon, delta, 2.0)
    system = GaussianRelease(f"analytic-gaussian ({epsilon:g}, {delta:g})", sigma, epsilon, delta, dim=4)
    runs = []
    for seed in np.random.SeedSequence(root).spawn(seeds):
        row = _audit(system, n, int(seed.generate_state(1)[0])).rows[0]
        runs.append(
            pw.CurveRun(
                curve_epsilon=row.curve_epsilon,
                mu_lower_bound=row.mu_lower_bound,
                threshold_epsilon_lower_bound=row.epsilon_lower_bound,
                verdict=row.verdict,
                detectable_epsilon=row.detectable_epsilon,
            )
        )
    curve = np.array([r.curve_epsilon for r in runs]) / epsilon
    threshold = np.array([r.threshold_epsilon_lower_bound for r in runs]) / epsilon
    oracle_rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(root + 1).spawn(seeds)]
    oracle = np.array([_oracle_seed(2.0 / sigma, delta, n, r) for r in oracle_rngs]) / epsilon
    return pw.CurveVsThreshold(
        epsilon=epsilon,
        delta=delta,
        mu=2.0 / sigma,
        n_per_side=n,
        alpha=ALPHA,
        alpha_split=pw.AlphaSplit(threshold=split_alpha(ALPHA)[0], curve=split_alpha(ALPHA)[1]),
        seeds=seeds,
        path="audit_system on a 4-dimensional analytic Gaussian (training split 25% of n)",
        fractions=pw.CurveFractions(
            curve_fraction_median=float(np.median(curve)),
            curve_fraction_min=float(curve.min()),
            threshold_fraction_median=float(np.median(threshold)),
            threshold_fraction_min=float(threshold.min()),
            oracle_curve_fraction_median=float(np.median(oracle)),
            oracle_curve_fraction_min=float(oracle.min()),
        ),
        verdicts=sorted({r.verdict for r in runs}),
        runs=runs,
    )


# ---- the miscalibrated mechanism --------------------------------------------------------------


def miscalibrated(n: int = 20_000, seed: int = 0) -> pw.MiscalibratedStudy:
    sigma = analytic_gaussian_sigma(10.0, 1e-5, 1e-4)  # the sensitivity parameter set to 1e-4
    rows = {}
    for label, curve in (("with its curve", True), ("(10, 1e-5) only", False)):
        system = GaussianRelease(
            f"miscalibrated {label}", sigma, 10.0, 1e-5, dim=4, claimed_sigma=2.0 * sigma / 1e-4, curve=curve
        )
        result = _audit(system, n, seed)
        row = result.rows[0]
        rows[label] = pw.MiscalibratedRow(
            verdict=row.verdict,
            epsilon_lower_bound=row.epsilon_lower_bound,
            max_certifiable_epsilon=row.max_certifiable_epsilon,
            claimed_mu=row.claimed_mu,
            mu_lower_bound=row.mu_lower_bound,
            curve_epsilon=row.curve_epsilon,
            detectable_epsilon=row.detectable_epsilon,
            samples_to_decide=row.samples_to_decide,
            false_positives=row.false_positives,
            false_negatives=row.false_negatives,
        )
    return pw.MiscalibratedStudy(sigma=sigma, claimed_mu=1e-4 / sigma, true_mu=2.0 / sigma, n_per_side=n, rows=rows)


# ---- false alarms ------------------------------------------------------------------------------


def _diffprivlib_gaussian_analytic():
    """diffprivlib's GaussianAnalytic (IBM). Its package ``__init__`` imports its scikit-learn models, which
    fail on the installed scikit-learn; the mechanisms subpackage is loaded without it."""
    import importlib.util
    import types

    if "diffprivlib.mechanisms" not in sys.modules:
        spec = importlib.util.find_spec("diffprivlib")
        if spec is None:
            return None
        if "diffprivlib" not in sys.modules:
            package = types.ModuleType("diffprivlib")
            package.__path__ = list(spec.submodule_search_locations)
            sys.modules["diffprivlib"] = package
    from diffprivlib.mechanisms import GaussianAnalytic

    return GaussianAnalytic


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The textbook σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1; valid for ε < 1)."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def textbook_analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """σ written here from Balle & Wang 2018, Thm. 8, by bisection on δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)."""
    from scipy.stats import norm

    def excess(sigma: float) -> float:
        a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
        return norm.cdf(a - b) - math.exp(epsilon + norm.logcdf(-a - b)) - delta

    low, high = 1e-6 * sensitivity, 1e3 * sensitivity
    for _ in range(200):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if excess(mid) > 0 else (low, mid)
    return high


def _false_alarm_systems() -> list:
    systems = []
    gaussian_analytic = _diffprivlib_gaussian_analytic()
    for eps in (0.5, 1.0, 2.0, 4.0, 8.0):
        for delta in (1e-5, 1e-8):
            for dim in (1, 4, 16):
                sigma = analytic_gaussian_sigma(eps, delta, 2.0)
                systems.append(
                    GaussianRelease(f"project analytic ({eps:g}, {delta:g}) d={dim}", sigma, eps, delta, dim)
                )
            sigma = textbook_analytic_sigma(eps, delta, 2.0)
            systems.append(GaussianRelease(f"textbook analytic ({eps:g}, {delta:g}) d=4", sigma, eps, delta, 4))
            if eps < 1.0:
                sigma = classic_gaussian_sigma(eps, delta, 2.0)
                systems.append(GaussianRelease(f"textbook classic ({eps:g}, {delta:g}) d=4", sigma, eps, delta, 4))
            if gaussian_analytic is not None:
                mech = gaussian_analytic(epsilon=eps, delta=delta, sensitivity=2.0)
                systems.append(
                    GaussianRelease(
                        f"diffprivlib GaussianAnalytic ({eps:g}, {delta:g}) d=1",
                        mech._scale,
                        eps,
                        delta,
                        1,
                        noise=_diffprivlib_noise(gaussian_analytic, eps, delta),
                    )
                )
    return systems


def _diffprivlib_noise(cls, eps: float, delta: float):
    def noise(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        mech = cls(
            epsilon=eps, delta=delta, sensitivity=2.0, random_state=np.random.RandomState(int(rng.integers(2**31)))
        )
        return np.array([[mech.randomise(0.0)] for _ in range(n)])

    return noise


FALSE_ALARM_SEEDS = 3  # audits per correct mechanism, each on its own seed


def _false_alarm_seeds(root: int, mechanisms: int, per_mechanism: int) -> list[list[int]]:
    """Per mechanism, ``per_mechanism`` audit seeds: the first is the mechanism's own child of ``root`` (the seed a
    one-seed study uses), the others that child's children."""
    out = []
    for child in np.random.SeedSequence(root).spawn(mechanisms):
        first = int(child.generate_state(1)[0])
        out.append([first, *(int(c.generate_state(1)[0]) for c in child.spawn(per_mechanism - 1))])
    return out


def false_alarms(n: int = 20_000, root: int = 3, seeds: int = FALSE_ALARM_SEEDS) -> pw.FalseAlarmStudy:
    """Every correctly calibrated Gaussian of :func:`_false_alarm_systems` audited on ``seeds`` seeds each: how many
    audits are flagged (each at most α by the certificate's confidence)."""
    systems = _false_alarm_systems()
    rows = []
    for system, system_seeds in zip(systems, _false_alarm_seeds(root, len(systems), seeds), strict=True):
        for index, seed in enumerate(system_seeds):
            rows.append(_false_alarm_row(system, index, _audit(system, n, seed).rows[0]))
    flagged = sum(r.verdict == "violated" for r in rows)
    return pw.FalseAlarmStudy(
        n_per_side=n,
        alpha=ALPHA,
        mechanisms=len(systems),
        seeds=seeds,
        flagged=flagged,
        diffprivlib=_diffprivlib_version(),
        rows=rows,
    )


def _false_alarm_row(system, seed_index: int, row) -> pw.FalseAlarmRow:
    return pw.FalseAlarmRow(
        mechanism=system.name,
        sigma=system.sigma,
        claimed_epsilon=row.claimed_epsilon,
        claimed_delta=row.claimed_delta,
        claimed_mu=row.claimed_mu,
        verdict=row.verdict,
        epsilon_lower_bound=row.epsilon_lower_bound,
        mu_lower_bound=row.mu_lower_bound,
        curve_epsilon=row.curve_epsilon,
        detectable_epsilon=row.detectable_epsilon,
        seed=seed_index,
    )


def _diffprivlib_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("diffprivlib")
    except Exception:  # not installed: its rows are left out
        return None


# ---- detectability -----------------------------------------------------------------------------

DETECTABILITY_CASES = (  # (label, claim ε, δ, with curve)
    ("Gaussian (1, 1e-5) with curve", 1.0, 1e-5, True),
    ("Gaussian (2, 1e-5) with curve", 2.0, 1e-5, True),
    ("Gaussian (1, 1e-5), threshold only", 1.0, 1e-5, False),
    ("Laplace ε = 1", 1.0, 0.0, False),
    ("Laplace ε = 2", 2.0, 0.0, False),
)


def _leaky_system(label: str, eps: float, delta: float, curve: bool, leak: float):
    """A release whose exact ε (at δ) is ``leak``, claiming ``eps`` (with its curve when ``curve``)."""
    if delta > 0:
        sigma = 2.0 / gdp_mu_for(leak, delta)  # a Gaussian whose exact ε at δ is the leak
        return GaussianRelease(label, sigma, eps, delta, 1, claimed_sigma=2.0 / gdp_mu_for(eps, delta), curve=curve)
    return LaplaceRelease(label, leak, eps)


def detectability(n: int = 10_000, runs: int = 200, root: int = 5) -> pw.DetectabilityStudy:
    """Each run audits the correct release (its true ε the claim) and reads the ``detectable_epsilon`` its own
    certified test states, then audits a release leaking exactly that much on fresh seeds: the share flagged
    (the promise: ≥ 0.8). Rows that state no power (not separated, or ∞) are counted apart."""
    out = []
    for (label, eps, delta, curve), case_seq in zip(
        DETECTABILITY_CASES, np.random.SeedSequence(root).spawn(len(DETECTABILITY_CASES)), strict=True
    ):
        correct = _leaky_system(label, eps, delta, curve, eps)
        stated, flagged = [], 0
        for run_seq in case_seq.spawn(runs):
            first, second = (int(s.generate_state(1)[0]) for s in run_seq.spawn(2))
            leak = _audit(correct, n, first).rows[0].detectable_epsilon
            if leak is None or not math.isfinite(leak):
                continue
            stated.append(leak)
            flagged += _audit(_leaky_system(label, eps, delta, curve, leak), n, second).rows[0].verdict == "violated"
        out.append(
            pw.DetectabilityCase(
                mechanism=label,
                claimed_epsilon=eps,
                delta=delta,
                curve=curve,
                runs=runs,
                stated_power=len(stated),
                detectable_epsilon_median=float(np.median(stated)),
                detectable_epsilon_range=[float(min(stated)), float(max(stated))],
                flagged=int(flagged),
                rate=flagged / max(len(stated), 1),
            )
        )
    return pw.DetectabilityStudy(
        n_per_side=n,
        alpha=ALPHA,
        power_promised=0.8,
        goal_rate=0.75,
        power="measured: each run's own certified test (audit.power.measured)",
        cases=out,
    )


def point_mass_detectability(n: int = 20_000, runs: int = 100, root: int = 6, dim: int = 4) -> pw.PointMassStudy:
    """The δ test's stated power: a correct Laplace (ε = 1) audit states the smallest point mass it would catch;
    a Laplace that releases its input exactly with that probability is audited on fresh seeds: the share flagged."""
    from audit.engine.blackbox import audit_mechanism
    from audit.selftest.mutants import RareNoiselessRelease
    from pgc.mechanisms import Laplace

    stated = audit_mechanism(Laplace(1.0), dim=dim, samples=n, seed=root).row.detectable_delta
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(root).spawn(runs)]
    leaky = RareNoiselessRelease(1.0, leak_rate=stated)
    flagged = sum(audit_mechanism(leaky, dim=dim, samples=n, seed=s).row.verdict == "violated" for s in seeds)
    return pw.PointMassStudy(
        n_per_side=n,
        dim=dim,
        alpha=ALPHA,
        detectable_delta=stated,
        runs=runs,
        flagged=int(flagged),
        rate=flagged / runs,
        power_promised=0.8,
    )


# ---- the sequential procedure under the null ---------------------------------------------------


def sequential_null(
    runs: int = 2000, root: int = 7, n_first: int = 2000, budget: int = 62_000, claim: float = 4.0
) -> pw.SequentialNullStudy:
    """Exact Gaussians at (``claim``, 1e-5) audited by the stopping rule (their claims are true): the share
    flagged. At ε = 4 the stages decide within the budget (from about 16,000 per side)."""
    mu = gdp_mu_for(claim, 1e-5)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(root).spawn(runs)]

    def draw(n: int, rng: np.random.Generator):
        return rng.normal(mu, 1.0, n), rng.normal(0.0, 1.0, n)

    results = [sequential_curve_audit(draw, claim, 1e-5, ALPHA, rng, n_first=n_first, budget=budget) for rng in rngs]
    flagged = sum(r.verdict == "violated" for r in results)
    test = binomtest(flagged, runs, ALPHA, alternative="greater")
    return pw.SequentialNullStudy(
        runs=runs,
        claim=[claim, 1e-5],
        n_first=n_first,
        budget_per_side=budget,
        alpha=ALPHA,
        alpha_spending="α_k = α·n_k / Σ n_j",
        flagged=flagged,
        rate=flagged / runs,
        consistent=sum(r.verdict == "consistent" and r.decisive for r in results),
        undecided=sum(not r.decisive for r in results),
        binomial_test_rate_above_alpha_p=float(test.pvalue),
        path="the stopping rule of audit.certification.sequential on one-dimensional scores (curve test per stage)",
    )


STUDIES: dict[str, Callable[[], pw.PowerEvidence]] = {
    "miscalibrated": miscalibrated,
    "false-alarms": false_alarms,
    "detectability": detectability,
    "point-mass-detectability": point_mass_detectability,
    "sequential-null": sequential_null,
}
CURVE_VS_THRESHOLD = (  # (ε, δ, n per side, seeds, root seed)
    (2.0, 1e-5, 100_000, 20, 20),
    (1.0, 1e-5, 100_000, 20, 10),
    (1.0, 1e-5, 1_000_000, 20, 30),
)


def run_study(name: str, curve_settings=CURVE_VS_THRESHOLD) -> pw.PowerStudy:
    """One study's result, timed: ``curve-vs-threshold`` (its ``studies``, one per setting) or another (its one
    ``study``)."""
    start = time.perf_counter()
    if name == "curve-vs-threshold":
        studies = [curve_vs_threshold(*setting) for setting in curve_settings]
        return pw.PowerStudy(
            studies=studies,
            wall_time_s=time.perf_counter() - start,
            command=f"python -m audit.power.study --only {name}",
        )
    study = STUDIES[name]()
    return pw.PowerStudy(
        study=study, wall_time_s=time.perf_counter() - start, command=f"python -m audit.power.study --only {name}"
    )


def write_study(path: Path, result: pw.PowerStudy) -> None:
    """A study's typed result written as JSON (atomically)."""
    write_text_atomic(path, json.dumps(schemas.json_ready(result.to_dict()), indent=1, allow_nan=False) + "\n")


def write_result(path: Path, body: dict, command: str) -> None:
    """A study given as a dict (``body``: its one ``study`` and its wall time), checked against its schema and
    written as JSON; for scripts that assemble their study as a dict (scripts/profile_study.py)."""
    out = schemas.json_ready(schemas.dump("power-study", {**body, "command": command}))
    write_text_atomic(path, json.dumps(out, indent=1, allow_nan=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    from pgc.options import add_out

    p = argparse.ArgumentParser(description="the curve audit's and the stated power's evidence")
    add_out(p, default="results/power", help="output folder (default results/power)")
    p.add_argument("--only", nargs="+", choices=["curve-vs-threshold", *sorted(STUDIES)], default=None)
    args = p.parse_args(argv)
    for name in args.only or ["curve-vs-threshold", *sorted(STUDIES)]:
        result = run_study(name)
        write_study(Path(args.out) / f"{name}.json", result)
        print(f"{name}: {result.wall_time_s:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
