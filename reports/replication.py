"""Tables (Markdown) and figures (PNG) of a ``pgc replicate`` result (:class:`pgc.schemas.ReplicateResult`).

    from reports.replication import write_replication
    paths = write_replication("results/replicate/replicate.json", "results/replicate")

Files: ``table1_fst.md``, ``table2_success_ratio.md``, ``table3_relative_auc.md``,
``control.md`` (each setting against its zero-information control), ``tables.md`` (all of them),
``figure2_learning_curves.png`` and ``figure3_success_ratio.png``. Every table puts the paper's
number beside ours and gives a per-cell verdict ("reproduced" when the paper's number lies in our
95 % interval). Everything is rendered before the first file is written; each file is written
atomically.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.schemas.replicate_kinds import AucEstimate, ReplicateResult, ReplicateSetting

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from pgc.files import write_bytes_atomic  # noqa: E402

from . import figure_kit  # noqa: E402

TABLE_FILES = {
    "table1": "table1_fst.md",
    "table2": "table2_success_ratio.md",
    "table3": "table3_relative_auc.md",
    "control": "control.md",
    "all": "tables.md",
}
FIGURE_FILES = {"figure2": "figure2_learning_curves.png", "figure3": "figure3_success_ratio.png"}
MECH_LABEL = {"laplace": "Lap", "prs": "PRS", "none": "non-private"}


class ReplicationInputError(UserError):
    """The JSON is missing, corrupted, or not a replicate result."""


def load_result(path: str | Path) -> ReplicateResult:
    path = Path(path)
    if not path.is_file():
        raise ReplicationInputError(f"{path} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReplicationInputError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != "replicate":
        raise ReplicationInputError(f"{path} is not a replicate result (kind != 'replicate')")
    for key in ("settings", "spec", "reading", "success_curve_x"):
        if key not in data:
            raise ReplicationInputError(f"{path} lacks {key!r}")
    result = schemas.load(data, where=str(path))
    assert isinstance(result, ReplicateResult)
    return result


# ---------------------------------------------------------------------------------------------
# formatting helpers
# ---------------------------------------------------------------------------------------------


def num(x) -> float:
    if isinstance(x, str):
        return float(x)  # "inf", "nan"
    return math.nan if x is None else float(x)


def fmt_eps(e) -> str:
    e = num(e)
    return "∞" if math.isinf(e) else f"{e:g}"


def fmt_fst(x) -> str:
    x = num(x)
    if math.isnan(x):
        return "n/a"
    return "∞" if math.isinf(x) else f"{x:,.1f}".replace(".0", "") if x == int(x) else f"{x:,.1f}"


def fmt_ratio(x, digits=2) -> str:
    x = num(x)
    return "n/a" if math.isnan(x) else f"{x:.{digits}f}"


def _label(row: ReplicateSetting) -> str:
    name = MECH_LABEL.get(row.cell.mechanism, row.cell.mechanism)
    if row.cell.variant:
        name += f" ({row.cell.variant})"
    return name + (" — control" if row.cell.control else "")


def _verdict_mark(v: str | None) -> str:
    if v is None:
        return ""
    if v.startswith("reproduced"):
        return "✓ " + v
    return "✗ " + v if v.startswith("not reproduced") else v


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _preamble(data: ReplicateResult) -> str:
    spec, reading, cost = data.spec, data.reading, data.cost
    assert spec is not None and reading is not None and cost is not None and cost.machine is not None
    machine = cost.machine
    load = machine.loadavg_at_start if machine.loadavg_at_start is not None else machine.loadavg
    lines = [
        f"Reading **{reading.name}**: {reading.summary}",
        "",
        f"{spec.trials} trials per setting, cap {spec.cap:,} submissions, {spec.workers} workers, "
        f"seeds {spec.seed}..{spec.seed + spec.trials - 1}; intervals at {int(_level(data) * 100)} %. "
        f"Wall time {cost.wall_time_s:.0f} s for {cost.agent_steps:,} agent-steps "
        f"({cost.trials_total} trials; machine {machine.cpu_count} cores, "
        f"load average at start {load}).",
    ]
    if reading.departures:
        lines += ["", "Departures from the paper's text: " + "; ".join(reading.departures) + "."]
    return "\n".join(lines) + "\n"


def _level(data: ReplicateResult) -> float:
    return data.level if data.level is not None else math.nan


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------


def table1(data: ReplicateResult) -> str:
    rows = []
    for r in data.settings:
        lo, hi = r.fst.median_fst_ci or [math.nan, math.nan]
        paper = r.paper.median_fst if r.paper else None
        rows.append(
            [
                _label(r),
                fmt_eps(r.cell.epsilon),
                str(r.cell.buffer_size),
                fmt_fst(r.fst.median_fst),
                f"[{fmt_fst(lo)}, {fmt_fst(hi)}] ({num(r.fst.median_ci_coverage) * 100:.1f} %)",
                "" if paper is None else fmt_fst(paper),
                _verdict_mark(r.verdict.median_fst if r.verdict else None),
            ]
        )
    head = (
        "## Table 1 — median first success time (eq. 26)\n\n"
        "FST = ∞ when μ never reached 195 within the cap; the interval is the distribution-free "
        "order-statistic interval for the median (its exact coverage in brackets).\n\n"
    )
    return head + _md_table(["setting", "ε", "MAX_BUF", "median FST (ours)", "interval", "paper", "verdict"], rows)


def table2(data: ReplicateResult) -> str:
    rows = []
    for r in data.settings:
        ratio = r.ratio
        lo, hi = (ratio.success_ratio_ci if ratio else None) or [math.nan, math.nan]
        paper = r.paper.success_ratio if r.paper else None
        rows.append(
            [
                _label(r),
                fmt_eps(r.cell.epsilon),
                f"{r.successes}/{r.trials}",
                fmt_ratio(ratio.success_ratio if ratio else None),
                f"[{fmt_ratio(lo, 3)}, {fmt_ratio(hi, 3)}]",
                "" if paper is None else fmt_ratio(paper),
                _verdict_mark(r.verdict.success_ratio if r.verdict else None),
            ]
        )
    head = "## Table 2 — success ratio at the cap (eq. 27)\n\nInterval: exact Clopper–Pearson.\n\n"
    return head + _md_table(["setting", "ε", "successes", "ratio (ours)", "interval", "paper", "verdict"], rows)


def table3(data: ReplicateResult) -> str:
    refs = [r.cell for r in data.settings if r.cell.mechanism == "none" and not r.cell.control]
    primary = data.primary_reference
    rows = []
    for r in data.settings:
        cells = [_label(r), fmt_eps(r.cell.epsilon)]
        for ref in refs:
            a = (r.relative_auc or {}).get(ref.variant or "", AucEstimate())
            lo, hi = a.ci or [math.nan, math.nan]
            cells.append(f"{fmt_ratio(a.value, 3)} [{fmt_ratio(lo, 3)}, {fmt_ratio(hi, 3)}]")
        paper = r.paper.relative_auc if r.paper else None
        cells += [
            "" if paper is None else fmt_ratio(paper, 3),
            _verdict_mark(r.verdict.relative_auc if r.verdict else None),
        ]
        rows.append(cells)
    ref_heads = [f"vs ε=∞ {ref.variant}" + (" (primary)" if ref.key == primary else "") for ref in refs]
    assert data.spec is not None
    head = (
        "## Table 3 — relative AUC of the success-ratio curve against non-private\n\n"
        f"AUC over submissions 1..{data.spec.cap:,}; percentile bootstrap interval (both sets of "
        "trials resampled). The verdict uses the primary reference. When the reference itself rarely "
        "succeeds the ratio is unstable (n/a when it never succeeds).\n\n"
    )
    return head + _md_table(["setting", "ε", *ref_heads, "paper", "verdict"], rows)


def control_table(data: ReplicateResult) -> str:
    rows = []
    for c in data.control_comparisons or []:
        n, t = c.counts, c.tests
        best = (
            f"{num(n.best_mu_median):.0f} vs {num(n.control_best_mu_median):.0f} (p {t.p_best_mu:.2g})"
            if t.p_best_mu is not None
            else "n/a"
        )
        rows.append(
            [
                c.setting,
                c.control,
                f"{n.successes} vs {n.control_successes}",
                f"{fmt_fst(n.median_fst)} vs {fmt_fst(n.control_median_fst)}",
                f"{num(t.p_mwu_holm):.3g}",
                f"{num(t.p_fisher_holm):.3g}",
                str(c.verdict),
                best,
            ]
        )
    head = (
        "## Zero-information control\n\n"
        "The control feeds the mechanism a zero gradient: its submissions are pure mechanism noise, θ does "
        "a random walk. One-sided tests that the setting beats its control (Mann–Whitney U on FST with "
        "censored trials tied at the top; Fisher exact on success counts), Holm-adjusted; "
        f'"better" when either adjusted p < {1 - _level(data):.2f}. Last column, not used by the verdict: '
        "median of each trial's best μ, setting vs control, with a one-sided Mann–Whitney p (unadjusted) — "
        "a graded signal below the success threshold.\n\n"
    )
    return head + _md_table(
        [
            "setting",
            "control",
            "successes",
            "median FST",
            "p (MWU, Holm)",
            "p (Fisher, Holm)",
            "verdict",
            "best μ (median)",
        ],
        rows,
    )


def render_tables(data: ReplicateResult) -> dict[str, str]:
    pre = _preamble(data)
    t = {"table1": table1(data), "table2": table2(data), "table3": table3(data), "control": control_table(data)}
    out = {name: f"{pre}\n{text}" for name, text in t.items()}
    notes = "".join(f"- {n}\n" for n in data.notes or [])
    summary = f"## Summary\n\n{notes}\n" if notes else ""
    out["all"] = f"# Replication of PGC-A3C §4\n\n{pre}\n{summary}" + "\n".join(t.values())
    return out


# ---------------------------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------------------------


def _png(fig) -> bytes:
    return figure_kit.png(fig, 100)


def figure3(data: ReplicateResult) -> bytes:
    """Success ratio against submissions, one panel per mechanism; controls dashed, ε = ∞ black."""
    x = np.asarray(data.success_curve_x, float)
    mechs = [m for m in ("laplace", "prs") if any(r.cell.mechanism == m for r in data.settings)]
    fig, axes = figure_kit.new_figure(5.5 * max(1, len(mechs)), 5.4, ncols=max(1, len(mechs)))
    colours = plt.get_cmap("viridis")
    eps_all = sorted({num(r.cell.epsilon) for r in data.settings if r.cell.mechanism != "none"})
    for ax, mech in zip(axes[0], mechs, strict=False):
        for r in data.settings:
            cell = r.cell
            if cell.mechanism == "none":
                style = {"color": "black", "lw": 2, "ls": "-" if cell.key == data.primary_reference else ":"}
                ax.step(x, r.success_curve, where="post", label=f"ε=∞ {cell.variant}", **style)
            elif cell.mechanism == mech:
                e = num(cell.epsilon)
                c = colours(eps_all.index(e) / max(1, len(eps_all) - 1) * 0.85)
                ax.step(
                    x,
                    r.success_curve,
                    where="post",
                    color=c,
                    ls="--" if cell.control else "-",
                    lw=1.2 if cell.control else 1.8,
                    label=f"ε={fmt_eps(e)}" + (" control" if cell.control else ""),
                )
        ax.set_title(f"({'ab'[mechs.index(mech)]}) {MECH_LABEL[mech]}, |B|={100 if mech == 'prs' else 1}")
        ax.set_xlabel("#submissions")
        ax.set_ylabel("success ratio")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        figure_kit.legend_below(ax, 0.5, ncol=3)
    fig.suptitle(f"Figure 3 — success ratio (reading {_reading_name(data)}; dashed: zero-information control)")
    return _png(fig)


def _reading_name(data: ReplicateResult) -> str | None:
    return data.reading.name if data.reading else None


def figure2(data: ReplicateResult) -> bytes:
    """Average score μ (eq. 25) during training at ε = 1, with and without buffering."""
    curves = data.figure2 or {}
    fig, axes = figure_kit.new_figure(11, 4.8, ncols=2)
    for ax, mech in zip(axes[0], ("laplace", "prs"), strict=True):
        eps_label = "1"
        for key, cur in sorted(curves.items()):
            parts = key.split("/")
            if parts[1] != mech:
                continue
            eps_label = parts[2][4:]
            buf = parts[3]
            colour = "#1c7ed6" if buf == "B=1" else "#e8590c"
            x = np.asarray(cur.submissions, float)
            for mu in cur.mu:
                ax.plot(x, np.asarray(mu, float), color=colour, alpha=0.25, lw=0.7)
            ax.plot(
                x,
                np.asarray(cur.mean_mu, float),
                color=colour,
                lw=2,
                label=f"|B|={buf[2:]} (mean of {len(cur.mu)})",
            )
        ax.axhline(195, color="grey", ls=":", lw=1)
        ax.set_title(f"{MECH_LABEL[mech]}, ε={eps_label}")
        ax.set_xlabel("#submissions")
        ax.set_ylabel("average score μ (last 10)")
        ax.set_ylim(0, 205)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            figure_kit.legend_below(ax, 0.5, fontsize=8, ncol=2)
        else:
            ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(f"Figure 2 — average scores with and without buffering (reading {_reading_name(data)})")
    return _png(fig)


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------


def render_all(data: ReplicateResult) -> dict[str, bytes]:
    """Every output file name → bytes (nothing written)."""
    out = {TABLE_FILES[name]: text.encode() for name, text in render_tables(data).items()}
    out[FIGURE_FILES["figure3"]] = figure3(data)
    if data.figure2:
        out[FIGURE_FILES["figure2"]] = figure2(data)
    return out


def write_replication(result: str | Path | ReplicateResult, out_dir: str | Path) -> dict[str, Path]:
    """Render tables and figures of a replicate result (its file or the result) into ``out_dir``."""
    data = result if isinstance(result, ReplicateResult) else load_result(result)
    blobs = render_all(data)
    out = Path(out_dir)
    written = {}
    for name, blob in blobs.items():
        write_bytes_atomic(out / name, blob)
        written[name] = out / name
    return written
