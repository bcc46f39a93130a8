"""``pgc audit recertify RESULT``: a System audit's certified tests run again on fresh releases.

A row's witness is what reproduces it: the pair of secrets (the row's ``hypothesis``), the statistic and its
fitted parameters, the threshold (``threshold``), the counts. The statistic is not stored as code or as a
pickled object (loading a result never executes anything from it); it is fitted again instead: the audit is
re-run from the result's own command with the same root seed, so its search, training split and fit are the
recorded ones, bit for bit, and only the certification releases come from ``--certification-seed``
(:class:`audit.engine.system_audit.AuditSettings`). Every row must choose the recorded statistic at the recorded
threshold — the check that the fit was reproduced — before its fresh counts are read.
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
    if "--samples" in kept and kept[kept.index("--samples") + 1].startswith("auto"):
        raise UserError(f"{path}: an audit sampled until decisive; recertify re-runs audits of a fixed size")
    return kept


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
    argv = recorded_argv(recorded, str(path)) + ["--certification-seed", str(args.certification_seed)]
    from . import AuditCommand

    parser = _Parser(prog="pgc")
    sub = parser.add_subparsers(dest="command")
    command = AuditCommand()
    command.add_arguments(sub.add_parser("audit"))
    rerun = parser.parse_args(argv)
    rerun.result, rerun.announce = args.result, (lambda *a, **k: None)
    print(f"recertifying {path}: pgc {' '.join(argv)}", flush=True)
    from .subcommands import mode_function

    mode = rerun._audit.mode_of(rerun)
    result = mode_function(mode)(rerun, progress)
    recertification = compare_rows(recorded.get("rows") or [], result.rows, str(path), args.certification_seed)
    invocation = Invocation(command="pgc " + " ".join(argv), argv=argv)
    return dataclasses.replace(result, recertification=recertification, invocation=invocation)


def compare_rows(recorded: list, fresh: list, path: str, certification_seed: int):
    """Per channel: the recorded and the fresh ε_LB and verdicts; refuses a row whose fit was not reproduced."""
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
            f"  {new.channel:<20} {new.statistic} ≥ {new.threshold:.6g}: recorded ε_LB "
            f"{before.epsilon_lower_bound:.3f} ({before.verdict}), on fresh releases {new.epsilon_lower_bound:.3f} "
            f"({new.verdict})"
        )
    return Recertification(result=path, certification_seed=certification_seed, rows=rows)
