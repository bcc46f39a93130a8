"""Result schemas: every committed result loads, writers' dicts are checked and stamped, bad files get
one-line errors, the package is pure, and the shared helpers give hand-checked values."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from result_fixtures import audit_file, bandit_attack_fixture, bandit_regret_fixture, system_audit_fixture

import pgc.schemas as schemas
from pgc.schemas.shared import PAPER, binomial_interval, holm, ldp_ceiling

ROOT = Path(__file__).resolve().parents[3]
# committed files that declare no kind, and the schema each is read with
KINDLESS = {
    "results/bench/": "bench-numbers",
    "results/reliability/summary.json": "reliability",
    "results/tune/postgres-4x25.json": "tune-workers",
}


def _committed() -> list[Path]:
    return sorted((ROOT / "results").rglob("*.json"))


def _kind_for(path: Path) -> str | None:
    rel = path.relative_to(ROOT).as_posix()
    return next((kind for prefix, kind in KINDLESS.items() if rel.startswith(prefix)), None)


def test_every_committed_result_loads_with_its_schema():
    files = _committed()
    assert len(files) > 40
    kinds = set()
    for path in files:
        data = json.loads(path.read_text())
        kind = _kind_for(path) if schemas.kind_of(data) is None else None
        result = schemas.load(data, kind=kind, where=str(path))
        declared = kind or schemas.kind_of(data)
        if declared == "audit":  # the older kind: read as the kind its mode names
            assert result.KIND == schemas.legacy_audit_kind(data).KIND
        else:
            assert result.KIND == declared
        kinds.add(result.KIND)
    assert {"run-audit", "one-run-audit", "adversarial-audit", "adversarial-curve", "self-test"} <= kinds
    assert {"attack", "replicate", "tune", "mitigations-utility", "pipeline", "report"} <= kinds


def test_every_committed_result_writes_back_what_loads_again_unchanged():
    """load -> to_dict -> load gives the same record and the same dict: nothing a file states is lost on writing
    (a null it states, such as a library's version, is written back as null)."""
    for path in _committed():
        data = json.loads(path.read_text())
        kind = _kind_for(path) if schemas.kind_of(data) is None else None
        result = schemas.load(data, kind=kind, where=str(path))
        written = json.loads(json.dumps(result.to_dict()))
        again = schemas.load(written, kind=kind, where=f"{path} (written back)")
        assert again == result and again.to_dict() == result.to_dict(), path
    reference = json.loads((ROOT / "results/ldp/reference-ss.json").read_text())
    assert reference["library"]["version"] is None
    assert schemas.load(reference).to_dict()["library"] == reference["library"]


@pytest.mark.parametrize(
    "mode, kind",
    [("run", "run-audit"), ("one-run", "one-run-audit"), ("self-test", "self-test"), ("mechanism", "mechanism-audit")],
)
def test_the_older_audit_kind_loads_as_the_kind_its_mode_names(mode, kind):
    data = {"kind": "audit", "format_version": 2, "mode": mode, "channels": []}
    with pytest.raises(schemas.SchemaError, match="kind 'audit' format_version 2: .* lacks the field"):
        schemas.load(data)  # the older kind's own parts are required of it too
    assert schemas.legacy_audit_kind(data).KIND == kind
    with pytest.raises(schemas.SchemaError, match="mode 'nonsense'"):
        schemas.load({**data, "mode": "nonsense"})


def test_a_format_2_audit_loads_migrated_and_round_trips_as_its_own_kind():
    data = json.loads((ROOT / "results/audit/adversarial/laplace-eps1.json").read_text())
    assert data["format_version"] == 2
    result = schemas.load(data)
    assert isinstance(result, schemas.AdversarialModelAudit) and result.adversarial_audits
    assert result.search_settings.generations == data["search_settings"]["generations"]
    row = result.channels[0]
    assert isinstance(row.certificate.epsilon_lower_bound, float) and row.channel
    assert row.epsilon_lower_bound == row.certificate.epsilon_lower_bound
    back = result.to_dict()
    assert back["kind"] == "adversarial-audit" and back["format_version"] == 1
    # the migration changes only the coverage keys of each row: covered / partly_covered -> coverage
    for old_row, new_row in zip(data["channels"], back["channels"], strict=True):
        coverage = "covered" if old_row.get("covered", True) is not False else "uncovered"
        coverage = "partly covered" if coverage == "uncovered" and old_row.get("partly_covered") else coverage
        assert new_row.pop("coverage") == coverage
        assert new_row == {k: v for k, v in old_row.items() if k not in ("covered", "partly_covered")}
    again = schemas.load(result.to_dict())
    assert again == result and again.to_dict() == result.to_dict()


def test_row_parts_hold_their_keys_and_coverage_is_an_enum():
    from pgc.schemas.audit_rows import Coverage, OneRunRow

    row = OneRunRow.from_dict(
        {
            "channel": "joint",
            "epsilon_lower_bound": 0.4,
            "covered": False,
            "partly_covered": True,
            "claimed_epsilon": 1.0,
            "curve_false_positives": 3,
            "verdict": "inconclusive",
            "canaries": 10,
        }
    )
    assert row.claim is not None and row.claim.coverage is Coverage.PARTLY and row.claim.epsilon == 1.0
    assert row.curve is not None and row.curve.false_positives == 3 and not hasattr(row, "profile")
    assert row.one_run is not None and row.one_run.canaries == 10 and row.passed is None and row.power is None
    assert row.to_dict()["coverage"] == "partly covered" and "covered" not in row.to_dict()
    changed = row.updated(verdict_reason="x", covered=True)
    assert changed.judgement.reason == "x" and changed.claim.coverage is Coverage.COVERED
    assert changed.curve == row.curve
    with pytest.raises(TypeError, match="no key 'nonsense'"):
        row.updated(nonsense=1)


def test_no_row_part_has_more_than_15_fields_and_keys_are_unique():
    import dataclasses

    from pgc.schemas import audit_rows

    for kind in audit_rows.ROW_KINDS:
        types = audit_rows.part_types(kind)
        for tp in [kind, *types.values()]:
            assert len([f for f in dataclasses.fields(tp) if f.name != "extra"]) <= 15, tp.__name__
        keys = [k for tp in types.values() for k in tp.json_keys()]
        assert len(keys) == len(set(keys)) and "channel" not in keys
    assert set(audit_rows.part_types(audit_rows.OneRunRow)) - set(audit_rows.part_types(audit_rows.AuditRow)) == {
        "one_run"
    }


def test_a_key_of_another_kinds_row_reads_as_none_and_cannot_be_set():
    from pgc.schemas.audit_rows import AdversarialRow, AuditRow, MechanismRow, OneRunRow, SelfTestRow

    row = AuditRow.make("c", epsilon_lower_bound=0.5)
    assert row.canaries is None and row.passed is None  # a one-run row's count, a self-test case's outcome
    with pytest.raises(AttributeError):
        row.nonsense  # noqa: B018
    with pytest.raises(TypeError, match="AuditRow has no key 'canaries'"):
        row.updated(canaries=10)
    assert row.updated(canaries=None) == row  # clearing a key the row cannot hold changes nothing
    one_run = OneRunRow.of(row, canaries=10, correct=7)
    assert (one_run.canaries, one_run.correct, one_run.epsilon_lower_bound) == (10, 7, 0.5)
    assert OneRunRow.from_dict(one_run.to_dict()).to_dict() == one_run.to_dict() and "canaries" in one_run.to_dict()
    case = SelfTestRow.of(row, passed=True)
    assert case.passed is True and case.canaries is None
    # a part becomes the other kind's part type: widened with its fields kept, narrowed only where nothing is lost
    channel = AuditRow.make("c", epsilon_lower_bound=0.5, broadcast="honest", false_positives=3)
    a3c = AdversarialRow.of(channel, model="final")
    assert (a3c.broadcast, a3c.model, a3c.false_positives) == ("honest", "final", 3)
    with pytest.raises(TypeError, match="Certificate has no false_positives"):
        OneRunRow.of(channel)
    with pytest.raises(TypeError, match="OneRunRow has no profile"):  # a part the kind lacks is refused as well
        OneRunRow.of(AuditRow.make("c", epsilon_lower_bound=0.5, profile_delta=1e-5))
    # a PGC-A3C row has no Holm family: a set place in one is refused, a cleared one converts
    judged = channel.updated(holm_rejected=True)
    with pytest.raises(TypeError, match="Judgement has no holm_rejected"):
        AdversarialRow.of(judged)
    cleared = AdversarialRow.of(judged, holm_rejected=None, model="final")
    assert cleared.holm_rejected is None and cleared.model == "final" and "holm_rejected" not in cleared.to_dict()
    # a mechanism's row has no observer's parts; as a self-test case's row it keeps what it holds
    mechanism = MechanismRow.make("output", epsilon_lower_bound=0.5, mechanism="laplace", hypothesis="a vs b")
    with pytest.raises(TypeError, match="MechanismRow has no key 'broadcast'"):
        mechanism.updated(broadcast="honest")
    case = SelfTestRow.of(mechanism, passed=True)
    assert (case.mechanism, case.hypothesis, case.broadcast, case.passed) == ("laplace", "a vs b", None, True)


def test_unnamed_keys_round_trip_unchanged():
    data = {
        "kind": "attack",
        "format_version": 1,
        "mode": "run",
        "extra": {"a": [1, {"b": None}]},
        "note": "x",
        "rows": [{"attacker": "a", "accuracy": 0.5, "channels": ["score"], "ci": [0.4, "inf"], "new": True}],
    }
    result = schemas.load(data)
    assert result.extra == {"extra": {"a": [1, {"b": None}]}, "note": "x"} and result.rows[0].ci == [0.4, math.inf]
    assert result.to_dict() == data


def test_dump_stamps_kind_and_version_first_and_keeps_the_writer_fields():
    fields = audit_file("run-audit", [{"channel": "gradient", "epsilon_lower_bound": math.inf, "claimed_epsilon": 1}])
    out = schemas.dump(
        "run-audit", {k: v for k, v in fields.items() if k not in ("kind", "format_version")} | {"seed": 3}
    )
    assert list(out)[:2] == ["kind", "format_version"] and out["kind"] == "run-audit" and out["format_version"] == 1
    assert out["seed"] == 3 and out["channels"][0]["epsilon_lower_bound"] == math.inf


@pytest.mark.parametrize(
    "kind, data, message",
    [
        (
            "run-audit",
            {**audit_file("run-audit", [{"channel": "gradient"}]), "kind": "run-audit"},
            "lacks the field 'epsilon_lower_bound'",
        ),
        (
            "attack",
            {"mode": "run", "rows": [{"attacker": "x", "accuracy": "high", "channels": []}]},
            "rows[0].accuracy is 'high', expected a number",
        ),
        ("train", {"format": "pgc-run/1", "trials": []}, "at least one trial"),
        ("nonsense", {}, "no schema for kind 'nonsense'"),
    ],
)
def test_dump_refuses_a_malformed_result(kind, data, message):
    with pytest.raises(schemas.SchemaError, match=re.escape(message)):
        schemas.dump(kind, data)


def test_unsupported_version_and_unknown_kind_are_one_line_errors_naming_both():
    with pytest.raises(schemas.SchemaError) as exc:
        schemas.load({"kind": "tune", "format_version": 7}, where="x.json")
    assert str(exc.value) == (
        "x.json: kind 'tune' format_version 7 is not supported (this pgc reads tune format_version 1)"
    )
    with pytest.raises(schemas.SchemaError, match=r"kind 'weather' \(format_version 1\) is not a known result kind"):
        schemas.load({"kind": "weather"})
    with pytest.raises(schemas.SchemaError, match="has no 'kind' field"):
        schemas.load({"numbers": {}})


def test_bandit_kinds_load_in_the_layout_their_writers_use():
    sa = schemas.load(system_audit_fixture())
    assert isinstance(sa, schemas.SystemAuditResult) and sa.rows[1].epsilon_lower_bound == math.inf
    assert sa.rows[0].gdp_mu_estimate is None and sa.accountant.epsilon == 0.97
    assert sa.to_dict()["rows"][1]["epsilon_lower_bound"] == "inf"
    reg = schemas.load(bandit_regret_fixture())
    assert isinstance(reg, schemas.BanditRegret) and reg.curves[1].time_averaged_group_regret[-1] == 1.2
    assert reg.curves[0].epsilon is None and reg.curves[0].regulariser == 10.0
    assert reg.curves[1].group_regret_at_T.interval == [115.0, 125.0]
    assert [p.n_silos for p in reg.privacy_cost] == [2, 4, 8] and reg.fit.exponent == 0.5
    assert reg.fit.theory == {"zhou_chowdhury_M_exponent": 0.75, "dp20_M_exponent": 0.5}
    att = schemas.load(bandit_attack_fixture())
    assert att.rows[0].n_test == 400 and att.rows[2].claim.epsilon == math.inf and att.rows[1].above_ceiling
    bad = system_audit_fixture()
    bad["rows"][0]["verdict"] = "fine"
    with pytest.raises(schemas.SchemaError, match=r"rows\[0\]\.verdict is 'fine', expected one of"):
        schemas.load(bad)


def test_bandit_kinds_refuse_malformed_files():
    short = bandit_regret_fixture()
    short["curves"][0]["lower"] = [0.1]
    with pytest.raises(schemas.SchemaError, match=r"lower has 1 values, t has 3"):
        schemas.load(short)
    spec_layout = bandit_regret_fixture()
    spec_layout["curves"] = {"fed-linucb": {"t": [1], "mean": [1.0], "lo": [0.9], "hi": [1.1]}}
    with pytest.raises(schemas.SchemaError, match=r"curves is .*expected a list"):
        schemas.load(spec_layout)
    row = bandit_attack_fixture()
    row["rows"][0]["interval"] = [0.4]
    with pytest.raises(schemas.SchemaError, match=r"interval has 1 values, expected two"):
        schemas.load(row)
    del row["rows"][1]["system"]
    with pytest.raises(schemas.SchemaError, match=r"rows\[0\] lacks the field 'system'"):
        schemas.load({**bandit_attack_fixture(), "rows": row["rows"][1:]})


def test_bench_numbers_load_as_the_record_their_benchmark_names_in_the_same_layout():
    expected = {
        "train": schemas.TrainBenchNumbers,
        "train-prs": schemas.TrainBenchNumbers,
        "replicate": schemas.ReplicateBenchNumbers,
        "scale": schemas.ScaleBenchNumbers,
    }
    loaded = {}
    for name, cls in expected.items():
        data = json.loads((ROOT / f"results/bench/{name}.json").read_text())
        result = schemas.load(data, kind="bench-numbers")
        assert type(result.numbers) is cls and not result.numbers.extra, name
        written = result.to_dict()
        assert list(written) == ["kind", "format_version", "numbers"]
        assert json.dumps(written["numbers"]) == json.dumps(data["numbers"]), name  # same keys in the same order
        loaded[name] = result.numbers
    train, replicate, scale = loaded["train"], loaded["replicate"], loaded["scale"]
    assert train.compiled.vectorised_agent_steps == 25762995 and train.host.cpu_count == 2
    assert train.ratio == train.references.ratio and train.python == "3.11.7"  # a flat part's key read by its name
    assert replicate.timings.identical_results is True and replicate.host.machine is None
    assert scale.batch.identical.ray and scale.storage_per_trial.postgresql.trials == 40
    data = json.loads((ROOT / "results/bench/train.json").read_text())
    with pytest.raises(schemas.SchemaError, match="numbers: .* matches none of"):
        schemas.load({"numbers": {**data["numbers"], "benchmark": "nonsense"}}, kind="bench-numbers")
    del data["numbers"]["naive_steps_per_s"]
    with pytest.raises(schemas.SchemaError, match="matches none of"):
        schemas.load(data, kind="bench-numbers")


def test_reliability_failures_are_typed_and_written_back_unchanged():
    failures = [
        {"family": "config", "argv": ["train", "--config", "c.toml"], "problems": ["traceback"], "stderr": "Error"},
        {"detail": "train kill 3: resume failed"},
        {"case": "typos", "argv": ["audit", "--system", "x"], "problems": ["hang"], "stderr": ""},
    ]
    data = {"cases_tried": 2, "failures": failures, "all_zero": False}
    result = schemas.load(data, kind="reliability")
    assert [type(f) for f in result.failures] == [schemas.ReliabilityFailure] * 3
    assert result.failures[0].family == "config" and result.failures[1].detail.startswith("train kill")
    assert result.failures[2].case == "typos" and result.failures[2].family is None
    assert result.to_dict()["failures"] == failures
    with pytest.raises(schemas.SchemaError, match=r"failures\[0\]\.argv is 'train', expected a list"):
        schemas.load({**data, "failures": [{"argv": "train"}]}, kind="reliability")


def test_schemas_import_nothing_from_the_project():
    code = (
        "import sys, pgc.schemas, pgc.schemas.shared; "
        "allowed = {'pgc', 'pgc.schemas', 'pgc.contracts', 'pgc.errors', 'pgc.files', 'pgc.interrupts'}; "
        "project = {m for m in sys.modules if m.split('.')[0] in ('pgc', 'audit', 'attacks', 'reports')}; "
        "print(sorted({m for m in project if m not in allowed and not m.startswith('pgc.schemas.')} "
        "| ({m.split('.')[0] for m in sys.modules} & {'numpy', 'statsmodels'})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_the_schema_modules_import_one_another_without_a_cycle():
    """Among pgc.schemas' modules the imports, type-only ones included, form no cycle."""
    import ast

    folder = ROOT / "pgc" / "schemas"
    names = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    graph = {}
    for name in names:
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pgc.schemas."):
                imported.add(node.module.split(".")[2])
        graph[name] = imported & names
    assert graph["audit_rows"] >= {"channels"}  # the graph is read: a known import is in it
    done, path = set(), []

    def visit(name):
        assert name not in path, " -> ".join([*path[path.index(name) :], name])
        if name not in done:
            path.append(name)
            for other in sorted(graph[name]):
                visit(other)
            path.pop()
            done.add(name)

    for name in sorted(graph):
        visit(name)


def test_reports_read_results_only_through_the_schemas():
    """No multi-key field guessing and no walking of raw JSON left in reports/."""
    for path in sorted((ROOT / "reports").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"\b_(num|int|first|context|outermost)\(", text), path
        assert "walk(" not in text and "src.data" not in text, path


def test_shared_helpers_hand_values():
    assert ldp_ceiling(1.0, 1, 3) == pytest.approx(math.e / (math.e + 2), abs=1e-12)
    assert ldp_ceiling(math.inf, 1, 3) == 1.0
    assert ldp_ceiling(0.5, 2, 2) == pytest.approx(math.e / (math.e + 1), abs=1e-12)
    reject, adjusted = holm([0.01, 0.04, 0.03], alpha=0.05)  # sorted 0.01·3, 0.03·2, max(0.04·1, 0.06)
    assert reject == [True, False, False] and adjusted == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == ([], [])
    lo, hi = binomial_interval(0, 10, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)  # exact upper end at k = 0
    assert PAPER[("laplace", 1.0)]["fst_median"] == 18377


# values a System or a library defines, not pgc-audit: a secret as the System takes it, a library's own parameters
OPEN_VALUES = {("SearchedPair", "secret"), ("SearchedPair", "secret_prime"), ("LibraryRun", "parameters")}
# a fitted statistic's parameters: their names and shapes are its kind's (audit.statistics.fitted), one per statistic
OPEN_VALUES |= {("FittedStatistic", "witness")}
# configuration a result records as it was given (a run's settings, a mechanism's or library's parameters, optuna's
# parameters, the command's arguments): open by nature
CONFIGURATION = {
    ("TrainTrial", "config"),
    ("TrainRun", "reading"),
    ("AuditedRun", "config"),
    ("AuditedRunMechanism", "config"),
    ("MechanismRecord", "params"),
    ("MechanismRecord", "factory_args"),
    ("TuneTrial", "params"),
    ("KilledWorker", "params"),
    ("BestTrial", "params"),
    ("TuneEvaluation", "hyper_values"),
    ("ReplicateReading", "hyper"),
    ("ReplicateOrigin", "cli_args"),
    ("ReadingSearch", "cli_args"),
    ("MitigationsUtility", "spec"),
    ("BanditRegret", "settings"),
    ("BanditAttack", "settings"),
    ("BanditBench", "settings"),
    ("ThesisMembership", "settings"),
    ("ThesisMapRecovery", "training"),
    ("ThesisMapRecovery", "genetic"),
    ("Pipeline", "defaults"),
    ("PipelineStep", "configs"),
    ("LdpCellOracle", "parameters"),
}


def _parts(tp, seen: dict) -> dict:
    """Every record type reachable from ``tp``'s fields (``tp`` included), by name."""
    import dataclasses
    import typing

    if tp.__name__ in seen:
        return seen
    seen[tp.__name__] = tp
    for hint in typing.get_type_hints(tp).values():
        stack = [hint]
        while stack:
            t = stack.pop()
            stack += list(typing.get_args(t))
            if isinstance(t, type) and issubclass(t, schemas.Record) and dataclasses.is_dataclass(t):
                _parts(t, seen)
    return seen


def test_every_result_type_has_at_most_15_fields_and_no_open_dict():
    import dataclasses
    import typing

    seen: dict = {}
    for kind in schemas.SCHEMAS.values():
        _parts(kind, seen)
    assert len(seen) > 100
    open_data = set()
    for name, tp in seen.items():
        fields = [f for f in dataclasses.fields(tp) if f.name not in ("extra", "kind", "format_version")]
        assert len(fields) <= 15, name
        hints = typing.get_type_hints(tp)
        for f in fields:
            text = str(hints[f.name])
            # Any anywhere in it, or a bare dict (dict, dict | None): a value whose shape no type states
            if "typing.Any" in text or re.search(r"(?<![\w.])dict(?!\[)", text):
                open_data.add((name, f.name))
    assert open_data - OPEN_VALUES - CONFIGURATION == set()  # measured data is typed
