"""``pgc audit recertify RESULT``: a System audit's certified tests run again on fresh releases.

A row's witness is what reproduces it: the pair of secrets (the row's ``hypothesis``), the statistic and its
fitted parameters (``witness``: saved as data, never as code or a pickled object, :mod:`audit.statistics.fitted`),
the threshold (``threshold``), the counts. The audit is re-run from the result's own command with the same root
seed, so its search, training split and fit are the recorded ones, bit for bit, and only the certification releases
come from ``--certification-seed``
(:class:`audit.engine.system_audit.AuditSettings`); an audit sampled until decisive re-runs its stages as recorded
and counts its deciding stage on fresh releases. The user's files are found where the audit read them (else from
the current folder or the result's) and must be unchanged (their recorded SHA-256). Every row must choose the
recorded statistic at the recorded threshold, fitted to the saved parameters bit for bit where the row saved them —
the check that the fit was reproduced — before its fresh counts are read.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path

from pgc.errors import UserError

RECERTIFIABLE = ("system", "flower", "ldp", "nvflare")  # the subcommands whose result is one System audit
DROPPED = {"--out": 1, "--force": 0, "--certification-seed": 1, "--progress": 0, "--no-progress": 0, "--fail-on": 1}


def recorded_argv(result: dict, path: str) -> list[str]:
    """The ``pgc`` arguments the result was made with (its ``argv``, else its ``command`` line)."""
    argv = result.get("argv")
    if not isinstance(argv, list):
        command = result.get("command")
        if not isinstance(command, str) or not command.startswith("pgc "):
            raise UserError(f"{path}: records no pgc command to re-run")
        argv = shlex.split(command)[1:]
    from .legacy import rewrite

    argv = [str(a) for a in argv]
    if len(argv) < 2 or argv[0] != "audit":
        raise UserError(f"{path}: made by 'pgc {' '.join(argv[:2])}', not by a pgc audit")
    argv = ["audit", *rewrite(argv[1:])]
    if argv[1] not in RECERTIFIABLE:
        raise UserError(
            f"{path}: a 'pgc audit {argv[1]}' result; recertify reads System audits ({', '.join(RECERTIFIABLE)})"
        )
    kept, skip = [], 0
    for item in argv:
        if skip:
            skip -= 1
            continue
        name = item.split("=", 1)[0]
        if name in DROPPED:
            skip = DROPPED[name] if "=" not in item else 0
            continue
        kept.append(item)
    return kept


def recorded_certification_seed(result: dict) -> int | None:
    """The ``--certification-seed`` the result was made with (a recertified result's), else None."""
    argv = [str(a) for a in result.get("argv") or []]
    for i, item in enumerate(argv):
        name, eq, value = item.partition("=")
        if name == "--certification-seed":
            text = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            return int(text) if text.lstrip("-").isdigit() else None
    return None


def located_argv(argv: list[str], result: dict, path: Path) -> list[str]:
    """``argv`` with each file of the user's code it names (the result's ``user_files``) at a place where that file
    lies unchanged: where the audit read it, else where its SPEC points from the current folder or from the
    result's folder; a file found only changed (its SHA-256 differs from the recorded one) or not found is refused,
    before anything runs. (:func:`check_loaded_files` checks what the re-run loaded.)"""
    from pgc.cli.provenance import file_sha256

    argv = list(argv)
    for record in _user_files(result):
        spec, recorded, digest = record.get("spec"), record.get("path"), record.get("sha256")
        if not (isinstance(spec, str) and isinstance(recorded, str) and isinstance(digest, str)):
            continue
        target, _, factory = spec.rpartition(":")
        # a file, or a top-level module read from its folder (a dotted module is imported as installed)
        is_file = target.endswith(".py") or "/" in target or (target.isidentifier() and Path(recorded).stem == target)
        relative = target if target.endswith(".py") or "/" in target else f"{target}.py"
        places = [Path(recorded)] + ([Path(relative), path.parent / relative] if is_file else [])
        found = [p for p in dict.fromkeys(places) if p.is_file()]
        same = next((p for p in found if file_sha256(str(p)) == digest), None)
        if same is None and found:
            raise UserError(
                f"{path}: {found[0]} has changed since the audit (its SHA-256 differs from the recorded one): "
                "recertify re-fits the recorded tests from the code that made them"
            )
        if same is None and is_file:
            raise UserError(
                f"{path}: the audited file {relative} is not found (looked at {', '.join(map(str, places))})"
            )
        named = [i for i, item in enumerate(argv) if _same_spec(item, spec)]
        if same is not None and is_file and named:
            argv[named[0]] = f"{same.resolve()}:{factory}"
    return argv


def _same_spec(item: str, spec: str) -> bool:
    """Whether the argument ``item`` names the recorded ``spec`` (a file's path as the loader normalises it)."""
    target, sep, factory = item.rpartition(":")
    return item == spec or (bool(sep) and f"{Path(target)}:{factory}" == spec)


def check_loaded_files(result: dict, path: Path, argv: list[str]) -> None:
    """Refuses a re-run whose SPECs (in ``argv``) loaded a file of the user's code whose SHA-256 is none of the
    recorded ones (a changed module imported from the current folder)."""
    from pgc.cli.provenance import file_sha256
    from pgc.usercode import user_module_files

    recorded = {f.get("sha256") for f in _user_files(result)}
    for loaded, spec in user_module_files().items():
        if recorded and spec in argv and file_sha256(loaded) not in recorded:
            raise UserError(
                f"{path}: the re-run loaded {loaded}, which is not the code the audit read (its SHA-256 is none of "
                "the recorded ones): recertify re-fits the recorded tests from the code that made them"
            )


def _user_files(result: dict) -> list:
    """The result's records of the user's files (spec, path, sha256)."""
    return (result.get("provenance") or {}).get("user_files") or []


def _stage_records(result: dict) -> list:
    """The stages a result sampled until decisive ran (empty: a fixed-size audit)."""
    stages = (result.get("sequential") or {}).get("stages")
    return stages if isinstance(stages, list) else []


def recorded_stages(result: dict) -> int | None:
    """The number of stages a result sampled until decisive ran (None: a fixed-size audit)."""
    return len(_stage_records(result)) or None


def recertify_result(args, progress: bool):
    from pgc.cli.main import _Parser
    from pgc.schemas.provenance import Invocation

    path = Path(args.recorded)
    if not path.is_file():
        raise UserError(f"{path}: no such result file")
    try:
        recorded = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a JSON result ({exc})") from None
    argv = located_argv(recorded_argv(recorded, str(path)), recorded, path)
    argv += ["--certification-seed", str(args.certification_seed)]
    from . import AuditCommand

    parser = _Parser(prog="pgc")
    sub = parser.add_subparsers(dest="command")
    command = AuditCommand()
    command.add_arguments(sub.add_parser("audit"))
    rerun = parser.parse_args(argv)
    rerun.result, rerun.announce, rerun.progress = args.result, (lambda *a, **k: None), progress
    rerun.recertify_stage = recorded_stages(recorded)  # a sequential audit: its deciding stage, fresh
    rerun.earlier_certification_seed = recorded_certification_seed(recorded)  # its earlier stages, as recorded
    print(f"recertifying {path}: pgc {' '.join(argv)}", flush=True)
    from .subcommands import mode_function

    mode = rerun._audit.mode_of(rerun)
    result = mode_function(mode)(rerun, progress)
    check_loaded_files(recorded, path, argv)
    check_stage(recorded, result, path)
    recertification = compare_rows(recorded.get("rows") or [], result.rows, str(path), args.certification_seed)
    invocation = Invocation(command="pgc " + " ".join(argv), argv=argv)
    return dataclasses.replace(result, recertification=recertification, invocation=invocation)


def check_stage(recorded: dict, result, path: Path) -> None:
    """Refuses a sequential re-run whose counted stage differs in size or level from the recorded deciding one."""
    stages = _stage_records(recorded)
    fresh = result.sequential.stages if result.sequential is not None else []
    if stages and (
        not fresh
        or fresh[-1].samples_per_side != stages[-1].get("samples_per_side")
        or abs(fresh[-1].alpha - float(stages[-1].get("alpha", -1.0))) > 1e-12
    ):
        raise UserError(
            f"{path}: the re-run's stage {len(stages)} is not the recorded one (its size or level differs: the "
            "stage plan changed); recertify counts the recorded deciding stage only"
        )


def compare_rows(recorded: list, fresh: list, path: str, certification_seed: int):
    """Per channel: the recorded and the fresh ε_LB and verdicts; refuses a row whose fit was not reproduced."""
    from audit.statistics.fitted import same_witness
    from pgc.schemas.audit_rows import AuditRow
    from pgc.schemas.kinds import Recertification, RecertifiedRow

    old = {r["channel"]: AuditRow.from_dict(r) for r in recorded}
    rows = []
    for new in fresh:
        before = old.get(new.channel)
        if before is None:
            continue
        if before.statistic != new.statistic or (before.threshold is not None and before.threshold != new.threshold):
            raise UserError(
                f"{path}: channel {new.channel!r} chose {new.statistic} at {new.threshold!r}, the result "
                f"records {before.statistic} at {before.threshold!r}: the audit did not reproduce its "
                "selection (a different system, version or setting)"
            )
        if before.witness is not None and not same_witness(before.witness, new.witness):
            raise UserError(
                f"{path}: channel {new.channel!r} fitted {new.statistic} to parameters other than the saved ones: "
                "the audit did not reproduce its fit (a different system, version or setting)"
            )
        rows.append(
            RecertifiedRow(
                channel=new.channel,
                statistic=new.statistic,
                threshold=new.threshold,
                recorded_epsilon_lower_bound=before.epsilon_lower_bound,
                fresh_epsilon_lower_bound=new.epsilon_lower_bound,
                recorded_verdict=str(before.verdict),
                fresh_verdict=str(new.verdict),
            )
        )
        print(
            f"  {new.channel:<20} {new.statistic}, {new.event or f'score ≥ {new.threshold:.6g}'}: recorded ε_LB "
            f"{before.epsilon_lower_bound:.3f} ({before.verdict}), on fresh releases {new.epsilon_lower_bound:.3f} "
            f"({new.verdict}); "
            + (
                "the saved fit reproduced"
                if before.witness is not None
                else "no saved fit: checked by its statistic and threshold"
            )
        )
    return Recertification(result=path, certification_seed=certification_seed, rows=rows)
