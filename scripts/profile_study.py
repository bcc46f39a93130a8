"""Claims with a privacy profile (a privacy-loss distribution's δ(ε) curve), audited through audit_system.

DP-SGD steps accounted as Poisson subsampling (pgc.toysystems.dpsgd) at several (q, σ, steps):

* ``poisson`` sampling, as the accountant assumes: the false-alarm check (none may be flagged);
* ``shuffle`` sampling (one step per epoch, Chua et al. ICML 2024): audited once against the claim with its
  profile and once against the same (ε, δ) without it, on the same seeds;
* ``always`` (a fixed batch): a gross violation.

Writes results/power/privacy-profiles.json:
    .venv/bin/python scripts/profile_study.py --out results/power [--samples 100000] [--seeds 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.engine.system_audit import audit_system  # noqa: E402
from audit.power.study import write_result  # noqa: E402
from pgc.toysystems.dpsgd import dp_sgd_system  # noqa: E402

SETTINGS = (
    {"sampling_rate": 0.1, "noise_multiplier": 0.8, "steps": 10},
    {"sampling_rate": 0.1, "noise_multiplier": 1.0, "steps": 20},
    {"sampling_rate": 0.05, "noise_multiplier": 0.8, "steps": 20},
    {"sampling_rate": 0.2, "noise_multiplier": 1.2, "steps": 10},
)
CASES = (("poisson", True), ("shuffle", True), ("shuffle", False))
ROW_FIELDS = (
    "verdict",
    "claimed_epsilon",
    "epsilon_lower_bound",
    "statistic",
    "profile_delta",
    "profile_claimed_epsilon",
    "profile_epsilon_lower_bound",
    "detectable_epsilon",
    "p_value",
)


def audit_once(sampling: str, profile: bool, setting: dict, samples: int, seed: int) -> dict:
    system = dp_sgd_system(sampling, profile=profile, **setting)
    result = audit_system(system, 1.0, 0.0, samples=samples, seed=seed, channels=["updates"])
    row = result.rows[0]
    return {"seed": seed, "wall_time_s": round(result.wall_time_s, 2), **{k: getattr(row, k) for k in ROW_FIELDS}}


def study(samples: int, seeds: int) -> dict:
    cases = []
    plan = [(s, p, setting) for setting in SETTINGS for s, p in CASES] + [("always", True, SETTINGS[0])]
    for index, (sampling, profile, setting) in enumerate(plan, 1):
        print(f"[{index}/{len(plan)}] {sampling} profile={profile} {setting}", flush=True)
        runs = [audit_once(sampling, profile, setting, samples, seed) for seed in range(seeds)]
        cases.append(
            {
                "sampling": sampling,
                "claim_states_profile": profile,
                **setting,
                "runs": runs,
                "flagged": sum(r["verdict"] == "violated" for r in runs),
                "audits": len(runs),
            }
        )

    def flagged(sampling: str, profile: bool) -> str:
        chosen = [c for c in cases if c["sampling"] == sampling and c["claim_states_profile"] == profile]
        return f"{sum(c['flagged'] for c in chosen)} of {sum(c['audits'] for c in chosen)}"

    return {
        "samples_per_side": samples,
        "seeds": seeds,
        "confidence": 0.95,
        "cases": cases,
        "summary": {
            "poisson_flagged": flagged("poisson", True),
            "shuffle_profile_flagged": flagged("shuffle", True),
            "shuffle_epsilon_delta_only_flagged": flagged("shuffle", False),
            "always_flagged": flagged("always", True),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.samples < 100 or args.seeds < 1:
        parser.error("--samples must be at least 100 and --seeds at least 1")  # exit 2, nothing written
    start = time.perf_counter()
    result = study(args.samples, args.seeds)
    command = (
        f".venv/bin/python scripts/profile_study.py --out {args.out} --samples {args.samples} --seeds {args.seeds}"
    )
    write_result(
        args.out / "privacy-profiles.json",
        {"study": result, "wall_time_s": round(time.perf_counter() - start, 1)},
        command,
    )
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
