"""Rewrite the committed audit results of format 1 in the current format: every row one ``pgc.schemas.AuditRow``,
recertified from the counts it records (``audit.engine.recertify``), judged by the one verdict rule and the one Holm
rule. Prints, per file, how many rows recertify bit for bit and every verdict that changes, with its reason.

    .venv/bin/python scripts/migrate_results.py            # report only
    .venv/bin/python scripts/migrate_results.py --write    # rewrite the files (temporary file, then rename)

Kinds: ``audit`` (its flat ``channels`` and the records nested beside them), ``system-audit``,
``flower-one-run``. Rows of PGC-A3C's environment and adversarial audits are held to the claim as a whole
(the rule their audit applies, ``AuditSettings.held_to_claim``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from audit.certification.claims import contradiction  # noqa: E402
from audit.certification.tester import EpsilonBound  # noqa: E402
from audit.engine.mechanism_result import DeltaTestResult, mechanism_row  # noqa: E402
from audit.engine.recertify import recertify  # noqa: E402
from audit.one_run import one_run_row  # noqa: E402
from audit.verdicts import with_family  # noqa: E402
from pgc.contracts import PrivacyClaim  # noqa: E402
from pgc.schemas.audit_rows import AuditRow  # noqa: E402

ROW_FIELDS = AuditRow.json_keys() | {"covered", "partly_covered"}  # format 2 keys too
RENAMED = {"delta": "claimed_delta", "crafted_for": "crafted_for"}


class Log:
    def __init__(self):
        self.lines, self.rows, self.identical, self.uncounted, self.changed = [], 0, 0, 0, []

    def row(self, where: str, old: str | None, new: AuditRow, identical: bool) -> None:
        self.rows += 1
        counted = new.false_positives is not None or new.canaries is not None
        self.identical += identical and counted
        self.uncounted += not counted
        if not identical:
            self.lines.append(f"  {where}: recomputed bounds differ from the recorded ones")
        if old is not None and str(old) != str(new.verdict):
            self.changed.append((where, str(old), str(new.verdict), new.verdict_reason))


def as_row(d: dict, **overrides) -> AuditRow:
    """A recorded row dict as an AuditRow (known fields typed; the rest kept in ``extra``)."""
    data = {RENAMED.get(k, k): v for k, v in d.items() if k not in ("verdict", "audit")}
    data.update(overrides)
    data.pop("verdict_reason", None)
    return AuditRow.from_dict({k: v for k, v in data.items() if v is not None})


def rejudged(d: dict, log: Log, where: str, claimed_profile=None, contradiction_of=None, **overrides) -> AuditRow:
    row = as_row(d, **overrides)
    if row.test_confidence is None and row.curve_false_positives is None:
        row = dataclasses.replace(row, test_confidence=row.confidence)
    if contradiction_of is not None:
        row = dataclasses.replace(row, claim_contradiction=contradiction_of(row))
    new, identical = recertify(row, claimed_profile)
    log.row(where, d.get("verdict"), new, identical)
    return new


def system_audit(data: dict, log: Log, name: str) -> dict:
    claim = data["claim"]
    profile = tuple(map(tuple, claim["privacy_profile"])) if claim.get("privacy_profile") else None

    def words(row: AuditRow) -> str | None:
        if row.covered is False:
            return None
        stated = PrivacyClaim(
            row.claimed_epsilon,
            row.claimed_delta or 0.0,
            (row.channel,),
            row.claimed_mu,
            profile if row.claimed_mu is None else None,
        )
        return contradiction(stated, row.accountant_epsilon)

    rows = [
        rejudged(
            r, log, f"{name} [{r['channel']}]", profile, words, confidence=data["confidence"], point_mass_search=False
        )
        for r in data["rows"]
    ]
    rows, verdict = with_family(rows, 1.0 - data["confidence"])
    if str(verdict) != data["verdict"]:
        log.changed.append((f"{name} (family)", data["verdict"], str(verdict), "Holm over the re-judged rows"))
    return {**data, "format_version": 2, "rows": [r.to_dict() for r in rows], "verdict": str(verdict)}


def mechanism_record(record: dict, log: Log, where: str, old_verdict: str | None, confidence: float) -> tuple:
    """A mechanism audit's record rebuilt around its judged row (from its ε test's and δ test's counts)."""
    from audit.power.measured import point_mass_detectable

    bound = EpsilonBound(**record["bound"])
    dt = DeltaTestResult(**record["delta_test"]) if record.get("delta_test") else None
    eps, delta = record["claimed_epsilon"], record.get("claimed_delta", 0.0) or 0.0
    claim = PrivacyClaim(eps, delta, ("output",), record.get("claimed_mu"))
    power = None
    if dt is not None:
        power = point_mass_detectable(bound.samples_per_side, dt.train_samples, 1.0 - dt.confidence, eps, delta, 3)
    row = mechanism_row(
        record["mechanism"], claim, bound, confidence, record["mode"], record.get("accountant_epsilon"), dt, power
    )
    log.row(
        where,
        old_verdict,
        row,
        math.isclose(row.epsilon_lower_bound, record["epsilon_lower_bound"], rel_tol=0, abs_tol=0),
    )
    new = {
        k: record[k]
        for k in ("mechanism", "mode", "wall_time_s", "cpu_time_s", "delta_time_s", "bound", "delta_test", "candidates")
        if k in record
    }
    return {**new, "row": row.to_dict()}, row


def one_run_record(d: dict, log: Log, where: str, confidence: float, **context) -> AuditRow:
    """A one-run row (PGC-A3C's canaries or a Flower observer's) rebuilt from its guesses."""
    from audit.one_run.bounds import one_run_p_value

    halved = d.get("claimed_mu") is not None or "fdp_mu_lower_bound" in d
    from pgc.schemas import number

    m, r, correct, delta = d["canaries"], d["guesses"], d["correct"], d.get("claimed_delta", 0.0) or 0.0
    claimed = number(d["claimed_epsilon"])
    fields = {
        k: number(d[k]) if k == "claimed_epsilon" else d[k]
        for k in (
            "claimed_epsilon",
            "claimed_delta",
            "epsilon_lower_bound",
            "canaries",
            "guesses",
            "correct",
            "accuracy",
            "statistic",
            "max_certifiable_epsilon",
            "samples_per_side",
            "claimed_mu",
            "fdp_mu_lower_bound",
            "steinke_epsilon_lower_bound",
            "fdp_epsilon_lower_bound",
            "bounds",
        )
        if d.get(k) is not None
    }
    fields["p_value"] = d.get(
        "p_value", one_run_p_value(m, r, correct, claimed, delta) if math.isfinite(claimed) else 1.0
    )
    fields["p_value_leak"] = one_run_p_value(m, r, correct, 0.0, delta)
    fields["test_confidence"] = 1.0 - (1.0 - confidence) / (2.0 if halved else 1.0)
    if "simulated_epsilon_lower_bound" in d:
        fields["extra"] = {"simulated_epsilon_lower_bound": d["simulated_epsilon_lower_bound"]}
    covered = d.get("covered", math.isfinite(claimed))
    row = one_run_row(d.get("channel", "aggregate"), fields, covered=covered, confidence=confidence, **context)
    log.row(where, d.get("verdict"), row, True)
    return row


def _key(scope: str, channel: str) -> tuple[str, str]:
    return scope, channel


def nested_environment(data: dict, flat: dict, log: Log, name: str) -> dict:
    """Judged rows of the environment and adversarial records nested in an audit result, by (scope, channel)."""
    out = {}
    conf = data.get("confidence") or 0.95
    protection = (data.get("protection") or {}).get("protect")
    groups = [
        ("environment", data.get("environment_audits") or [], None),
        ("adversarial", data.get("adversarial_audits") or [], "adversarial"),
        ("honest", data.get("honest_audits") or [], "honest"),
    ]
    curve = data.get("curve") is not None
    for label, records, model in groups:
        for rec in records:
            scope = f"{label} {rec['psi']:g} vs {rec['psi_prime']:g}" + (
                f" ε={rec['claimed_epsilon']:g}" if curve else ""
            )
            theta_files = rec.get("theta_files") or {}
            for ch in rec["channels"]:
                key = _key(scope, ch["channel"])
                merged = {**flat.get(key, {}), **ch}
                context = dict(scope=scope, held_to_claim=True, confidence=ch.get("confidence", conf))
                if model:
                    context["model"] = model
                if model == "adversarial":
                    context.update(broadcast="crafted", theta_file=theta_files.get(ch.get("crafted_for", "")))
                if protection or rec.get("protect"):
                    context["protect"] = rec.get("protect") or protection
                out[key] = rejudged(
                    {k: v for k, v in merged.items() if k not in ("scope", "model")},
                    log,
                    f"{name} [{scope} · {ch['channel']}]",
                    **context,
                )
    return out


def audit_result(data: dict, log: Log, name: str) -> dict:
    conf = data.get("confidence") or 0.95
    flat = {_key(r.get("scope", ""), r["channel"]): r for r in data["channels"]}
    nested = nested_environment(data, flat, log, name)
    mechanisms = iter(data.get("mechanism_audits") or [])
    tests = iter(data.get("self_test") or [])
    new_mech, channels = [], []
    for r in data["channels"]:
        where = f"{name} [{r.get('scope')} · {r['channel']}]"
        scope = r.get("scope", "")
        if scope == "mechanism":
            record, row = mechanism_record(next(mechanisms), log, where, r.get("verdict"), conf)
            new_mech.append(record)
            row = dataclasses.replace(row, channel=r["channel"])
        elif scope == "self-test":
            case = next(tests)
            record, row = mechanism_record(case["audit"], log, where, r.get("verdict"), conf)
            case.update(audit=record, verdict=str(row.verdict))
            row = dataclasses.replace(
                row,
                scope="self-test",
                channel=r["channel"],
                true_epsilon=r.get("true_epsilon"),
                correct_mechanism=r.get("correct_mechanism"),
                passed=r.get("passed"),
            )
        elif scope.startswith("one-run"):
            row = one_run_record(r, log, where, conf, scope=scope)
        else:
            row = nested.get(_key(scope, r["channel"]))
            if row is None:
                raise SystemExit(f"{name}: no nested record for row {scope!r} · {r['channel']!r}")
        channels.append(row)
    out = {**data, "format_version": 2, "channels": [row.to_dict() for row in channels]}
    if new_mech:
        out["mechanism_audits"] = new_mech
    for label in ("environment_audits", "adversarial_audits", "honest_audits"):
        for rec in out.get(label) or []:
            scope_label = label.split("_")[0]
            scope = f"{scope_label} {rec['psi']:g} vs {rec['psi_prime']:g}" + (
                f" ε={rec['claimed_epsilon']:g}" if data.get("curve") is not None else ""
            )
            rec["channels"] = [nested[_key(scope, ch["channel"])].to_dict() for ch in rec["channels"]]
    return out


def flower_one_run(data: dict, log: Log, name: str) -> dict:
    conf = data["setup"].get("confidence", 0.95)
    rows = [
        one_run_record(r, log, f"{name} [{r['observer']}]", conf, scope=r["observer"], note=r.get("promise"))
        for r in data["rows"]
    ]
    return {**data, "format_version": 2, "rows": [r.to_dict() for r in rows]}


MIGRATIONS = {"system-audit": system_audit, "audit": audit_result, "flower-one-run": flower_one_run}


def write_atomically(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the files in the current format")
    parser.add_argument("--root", default=str(ROOT / "results"))
    args = parser.parse_args()
    import pgc.schemas as schemas

    log = Log()
    for path in sorted(Path(args.root).rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind not in MIGRATIONS or data.get("format_version", 1) != 1:
            continue
        name = str(path.relative_to(ROOT))
        new = MIGRATIONS[kind](data, log, name)
        schemas.load(new, where=name)
        if args.write:
            write_atomically(path, new)
    print(
        f"{log.rows} rows re-judged: {log.identical} recertified from their counts bit for bit, "
        f"{log.uncounted} record no counts (their recorded bounds kept; no power stated)"
    )
    print("\n".join(log.lines))
    print(f"{len(log.changed)} verdicts changed:")
    for where, old, new, reason in log.changed:
        print(f"  {where}: {old} -> {new} ({reason})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
