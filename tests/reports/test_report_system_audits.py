"""The system audits and bandit attacks in report.json: each entry is a typed part that lists every key (an unset
one as null), a curve test's corner holds the keys of its own curve (μ-GDP or privacy profile) only, and the
summary reads back into the Report schema to the same JSON."""

from __future__ import annotations

import json

from result_fixtures import bandit_attack_fixture, system_audit_fixture

import pgc.schemas as schemas
from pgc.files import json_safe
from pgc.schemas.report_parts import ReportBanditAttack, ReportSystemAudit
from reports import build_report

CORNER = ["label", "system", "fpr_upper", "fnr_upper", "verdict"]


def _system_audit(system: str, row: dict, **fields) -> dict:
    data = system_audit_fixture()
    base = data["rows"][0]
    return {**data, "system": system, "rows": [{**base, **row}], **fields}


def _inputs(tmp_path) -> list:
    mu = _system_audit(
        "examples.mu:make",
        {"curve_false_positives": 3, "curve_false_negatives": 5, "mu_lower_bound": 0.4, "claimed_mu": 0.5},
    )
    claim = {"epsilon": 1.0, "delta": 1e-5, "covers": ["gradient"], "privacy_profile": [[0.5, 0.01], [1.0, 1e-5]]}
    profile = _system_audit(
        "examples.profile:make",
        {
            "curve_false_positives": 4,
            "curve_false_negatives": 6,
            "profile_delta": 1e-5,
            "profile_claimed_epsilon": 1.0,
            "profile_epsilon_lower_bound": 0.3,
        },
        claim=claim,
    )
    library = {
        "library": "reference",
        "version": None,
        "protocol": "SS",
        "parameters": {"k": 4, "epsilon": 1.0},
        "claimed_epsilon": 1.0,
        "claim_reading": "epsilon=1: claim ε = 1 per report",
    }
    oracle = _system_audit("examples.oracle:make", {}, library=library, report_section="library-audits")
    paths = []
    for name, data in (("mu", mu), ("profile", profile), ("oracle", oracle), ("attack", bandit_attack_fixture())):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        paths.append(path)
    return paths


def test_system_audits_and_bandit_attacks_are_typed_parts_that_read_back(tmp_path):
    build_report(_inputs(tmp_path), tmp_path / "report")
    text = (tmp_path / "report" / "report.json").read_text()
    summary = json.loads(text)
    audits = {h["system"]: h for h in summary["system_audits"]}
    assert list(audits) == ["examples.mu:make", "examples.profile:make", "examples.oracle:make"]
    keys = list(ReportSystemAudit.json_keys())
    assert all(sorted(h) == sorted(keys) for h in audits.values())  # every key, an unset one as null
    assert audits["examples.mu:make"]["relation"] is None
    (mu,) = audits["examples.mu:make"]["curves"]
    assert list(mu) == [*CORNER, "claimed_mu", "mu_lower_bound"]
    assert (mu["claimed_mu"], mu["mu_lower_bound"]) == (0.5, 0.4)
    (profile,) = audits["examples.profile:make"]["curves"]
    assert list(profile) == [*CORNER, "profile", "profile_delta", "profile_epsilon_lower_bound"]
    assert profile["profile"] == [[0.5, 0.01], [1.0, 1e-5]]
    assert audits["examples.oracle:make"]["library"]["version"] is None  # a library stating no version: null
    attacks = summary["bandit_attacks"]
    assert len(attacks) == 3 and all(sorted(a) == sorted(ReportBanditAttack.json_keys()) for a in attacks)
    assert [a["above_ceiling"] for a in attacks] == [False, True, False]

    report = schemas.load(summary)
    assert isinstance(report, schemas.Report) and report.audits is not None
    entry = report.audits.system_audits[2]
    assert entry.library is not None and entry.library.version is None
    corner = report.audits.system_audits[1].curves[0]
    assert corner.mu_curve is None and corner.profile_curve is not None
    assert report.audits.bandit_attacks[1].score.interval == attacks[1]["interval"]
    assert json.dumps(json_safe(report.to_dict()), indent=2, ensure_ascii=False) + "\n" == text

    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "tradeoff_curves.png" in summary["figures"]
    assert "Library audits" in markdown and "reference" in markdown
    assert "Federated linear bandits" in markdown and "above the ceiling" in markdown
