"""Re-judges the committed audit rows by the current verdict rule, from the counts each row records.

Every row of a result that holds rows (kinds ``audit``, ``system-audit``, ``flower-one-run``), wherever it sits in
the file (the flat rows and the records nested beside them), is recertified from its counts
(:func:`audit.engine.recertify.recertify`); the joint row ``all`` of a claim that covers some of the released channels
is marked ``partly_covered`` first (PGC-A3C's claim always covers its gradient; a system audit's claim names what
it covers). A system audit's family verdict is recomputed by Holm (:func:`audit.verdicts.with_family`), which
counts each test once: a joint row ``all`` beside a single released channel that records that channel's test
(:func:`repeated_joint_row`) stays in the file, outside the family, with its channel's Holm outcome. Files
whose rows change are rewritten atomically (temporary file, then rename); every changed verdict is printed.

    .venv/bin/python scripts/rejudge_results.py            # report only
    .venv/bin/python scripts/rejudge_results.py --write    # rewrite the files
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from audit.engine.recertify import recertify  # noqa: E402
from audit.engine.system_audit import is_partly_covered  # noqa: E402
from audit.verdicts import with_family  # noqa: E402
from pgc.contracts import ALL, PrivacyClaim  # noqa: E402
from pgc.schemas import AUDIT_KINDS, number  # noqa: E402
from pgc.schemas.audit_rows import AuditRow  # noqa: E402

KINDS = ("audit", "system-audit", "flower-one-run")
JUDGED = ("verdict", "verdict_reason", "coverage", "power_basis", "detectable_epsilon", "samples_to_decide")
# what makes two rows one test: the same statistic counted on the same releases, held to the same claim
SAME_TEST = (
    "statistic",
    "samples_per_side",
    "false_positives",
    "false_negatives",
    "fp_share",
    "discordant_pairs",
    "curve_false_positives",
    "curve_false_negatives",
    "broadcast",
    "claimed_epsilon",
    "claimed_delta",
    "covered",
)


def repeated_joint_row(rows: list[dict]) -> int | None:
    """The index of a joint row ``all`` that records the same test as the one other row, the single channel a
    result releases (one released channel is its own joint channel:
    :func:`audit.engine.system_audit.has_joint_channel`);
    None when the rows hold no such repeat."""
    joint = [i for i, r in enumerate(rows) if r.get("channel") == ALL]
    if len(rows) != 2 or len(joint) != 1:
        return None
    twin, other = rows[joint[0]], rows[1 - joint[0]]
    return joint[0] if all(twin.get(k) == other.get(k) for k in SAME_TEST) else None


def _claims_part(data: dict) -> bool:
    """Whether the result's claim covers part of its joint channel
    (:func:`audit.engine.system_audit.is_partly_covered` on
    the claim and the channels the result records)."""
    if data["kind"] == "audit" or data["kind"] in {kind.KIND for kind in AUDIT_KINDS}:
        return True  # PGC-A3C's and a mechanism's audits: the gradient (the output) is always covered
    claim = data.get("claim") or {}
    stated = PrivacyClaim(
        number(claim.get("epsilon", "inf")), claim.get("delta", 0.0), tuple(claim.get("covers") or ())
    )
    base = [r["channel"] for r in data.get("rows") or [] if r.get("channel") != ALL]
    return is_partly_covered(type("Claimant", (), {"claim": stated})(), ALL, base)


def _rejudged(node: dict, partly: bool, profile) -> AuditRow:
    row = AuditRow.from_dict({k: v for k, v in node.items() if k not in ("verdict", "verdict_reason")})
    if row.channel == ALL and row.covered is False and partly:
        row = row.updated(partly_covered=True)
    return recertify(row, profile)[0]


def rejudge(data: dict, where: str) -> list[str]:
    """Re-judge every row of ``data`` in place; the changed verdicts in words."""
    partly = _claims_part(data)
    claim = data.get("claim") or {}
    profile = tuple(map(tuple, claim["privacy_profile"])) if claim.get("privacy_profile") else None
    changes = []

    def visit(node, path):
        if isinstance(node, dict):
            if "channel" in node and "verdict" in node and "epsilon_lower_bound" in node:
                new = _rejudged(node, partly, profile).to_dict()
                if new.get("verdict") != node["verdict"]:
                    changes.append(f"{where}{path} [{node['channel']}]: {node['verdict']} → {new['verdict']}")
                for key in JUDGED:
                    if new.get(key) is not None or key in node:
                        node[key] = new.get(key)
                return
            for key, value in node.items():
                visit(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                visit(value, f"{path}[{i}]")

    visit(data, "")
    if data["kind"] == "system-audit":
        repeat = repeated_joint_row(data["rows"])
        counted = [AuditRow.from_dict(r) for i, r in enumerate(data["rows"]) if i != repeat]
        rows, verdict = with_family(counted, 1.0 - data["confidence"])
        if repeat is not None:  # the repeat takes the Holm outcome of the one test it records
            rows.insert(
                repeat,
                AuditRow.from_dict(data["rows"][repeat]).updated(holm_rejected=rows[0].holm_rejected),
            )
        for node, row in zip(data["rows"], rows, strict=True):
            node["holm_rejected"] = row.holm_rejected
        if str(verdict) != data["verdict"]:
            changes.append(f"{where} (family): {data['verdict']} → {verdict}")
            data["verdict"] = str(verdict)
    return changes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the files whose rows change")
    args = parser.parse_args(argv)
    for path in sorted((ROOT / "results").rglob("*.json")):
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("kind") not in KINDS:
            continue
        before = json.dumps(data, sort_keys=True)
        lines = text.splitlines()
        indent = len(lines[1]) - len(lines[1].lstrip(" ")) if len(lines) > 1 else 1  # the file's own layout
        changes = rejudge(data, str(path.relative_to(ROOT)))
        for line in changes:
            print(line)
        if args.write and json.dumps(data, sort_keys=True) != before:
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=indent, ensure_ascii=False)
                f.write("\n")
            os.replace(tmp, path)
            print(f"rewrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
