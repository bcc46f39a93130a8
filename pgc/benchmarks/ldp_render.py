"""The table and the figure of ``pgc bench ldp`` (its JSON result in, a Markdown file and a PNG out)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pgc.schemas import LdpBench, LdpBenchCell

FLOAT_SLACK = 1e-9  # our bound and LDP-Auditor's on the same event and α split differ only in rounding


def at_least_reference(cell: LdpBenchCell) -> bool:
    """Our bound ≥ LDP-Auditor's in a cell; the same counts give the same bound up to floating point."""
    return cell.epsilon_lower_bound >= cell.reference_epsilon_lower_bound - FLOAT_SLACK


RATIO_CAP = 1.6  # the figure's top: a bound beyond 1.6·ε (a broken protocol) is drawn there, as a triangle


def _num(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.2f}"


def protocol_rows(result: LdpBench) -> dict[tuple[str, str], list[LdpBenchCell]]:
    rows: dict[tuple[str, str], list[LdpBenchCell]] = defaultdict(list)
    for c in result.cells:
        rows[(c.oracle.library, c.oracle.protocol)].append(c)
    return rows


def median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return float("nan") if not n else (values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2]))


def summary_lines(result: LdpBench) -> list[str]:
    """Per protocol: the median of ours/ε and of LDP-Auditor/ε, ours/LDP-Auditor, cells ≥ 0.9·ε, flags."""
    lines = [
        "| library | protocol | version | cells | median ε_LB/ε (ours) | median ε_LB/ε (LDP-Auditor) | "
        "median ours/LDP-Auditor | ours ≥ LDP-Auditor | ≥ 0.9·ε | exact ε/ε | violated |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (library, protocol), cells in protocol_rows(result).items():
        ours = [c.epsilon_lower_bound / c.claimed_epsilon for c in cells]
        ref = [c.reference_epsilon_lower_bound / c.claimed_epsilon for c in cells]
        gain = [
            c.epsilon_lower_bound / c.reference_epsilon_lower_bound
            for c in cells
            if c.reference_epsilon_lower_bound > 0
        ]
        exact = sorted({_num(c.exact_epsilon / c.claimed_epsilon) for c in cells})
        lines.append(
            f"| {library} | {protocol} | {cells[0].oracle.version or '—'} | {len(cells)} | {median(ours):.3f} | "
            f"{median(ref):.3f} | {median(gain):.2f}× | "
            f"{sum(at_least_reference(c) for c in cells)} | "
            f"{sum(c.epsilon_lower_bound >= 0.9 * c.claimed_epsilon for c in cells)} | "
            f"{', '.join(exact) if len(exact) <= 3 else exact[0] + '…' + exact[-1]} | "
            f"{sum(c.verdict == 'violated' for c in cells)} |"
        )
    return lines


def cell_lines(result: LdpBench) -> list[str]:
    epsilons = sorted({c.oracle.epsilon for c in result.cells})
    lines = [
        "| library | protocol | k | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |",
        "|---|---|---|" + "---|" * len(epsilons),
    ]
    by_cell = {(c.oracle.library, c.oracle.protocol, c.oracle.k, c.oracle.epsilon): c for c in result.cells}
    for library, protocol, k in dict.fromkeys((c.oracle.library, c.oracle.protocol, c.oracle.k) for c in result.cells):
        entries = []
        for e in epsilons:
            c = by_cell.get((library, protocol, k, e))
            entries.append(
                "—"
                if c is None
                else f"{c.epsilon_lower_bound:.2f} / {c.reference_epsilon_lower_bound:.2f}"
                f" / {_num(c.exact_epsilon)}" + (" **violated**" if c.verdict == "violated" else "")
            )
        lines.append(f"| {library} | {protocol} | {k} | " + " | ".join(entries) + " |")
    return lines


def write_table(path: Path, result: LdpBench) -> None:
    from pgc.files import write_text_atomic

    settings = result.settings
    text = [
        f"# pgc bench ldp: {len(result.cells)} cells at {settings.samples:,} per side, "
        f"confidence {settings.confidence}",
        "",
        f"Command: `{result.command}`",
        "",
        "## Per protocol",
        "",
        *summary_lines(result),
        "",
        "## Per cell: ours / LDP-Auditor / exact ε (certified ε lower bounds at the same α; the exact ε of the "
        "release for the pair 0 vs k − 1)",
        "",
        *cell_lines(result),
        "",
    ]
    if result.timing:
        text += [
            "## One audit at "
            f"{settings.timing_samples or 0:,} per side (ε = 1): wall time on the 2-core "
            "machine that ran it",
            "",
            "| library | protocol | k | seconds |",
            "|---|---|---|---|",
        ]
        text += [f"| {t.oracle.library} | {t.oracle.protocol} | {t.oracle.k} | {t.wall_s:.1f} |" for t in result.timing]
    write_text_atomic(path, "\n".join(text) + "\n")


def write_figure(path: Path, result: LdpBench) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pgc.files import write_bytes_atomic

    libraries = list(dict.fromkeys(c.oracle.library for c in result.cells))
    fig, axes = plt.subplots(len(libraries), 1, figsize=(12, 3.2 * len(libraries)), squeeze=False)
    epsilons = sorted({c.oracle.epsilon for c in result.cells})
    colors = {e: plt.cm.viridis(i / max(1, len(epsilons) - 1)) for i, e in enumerate(epsilons)}
    for ax, library in zip(axes[:, 0], libraries, strict=True):
        cells = [c for c in result.cells if c.oracle.library == library]
        names = list(dict.fromkeys(c.oracle.protocol for c in cells))
        ks = sorted({c.oracle.k for c in cells})
        for c in cells:
            x = (
                names.index(c.oracle.protocol)
                + (ks.index(c.oracle.k) - (len(ks) - 1) / 2) * 0.24
                + (epsilons.index(c.oracle.epsilon) - (len(epsilons) - 1) / 2) * 0.035
            )  # ε spread inside each k
            ours = c.epsilon_lower_bound / c.claimed_epsilon
            ref = c.reference_epsilon_lower_bound / c.claimed_epsilon
            marker = "^" if ours > RATIO_CAP else "o"
            ax.scatter(x, min(ours, RATIO_CAP), color=colors[c.oracle.epsilon], marker=marker, s=18, zorder=3)
            ax.scatter(x, min(ref, RATIO_CAP), facecolors="none", edgecolors=colors[c.oracle.epsilon], s=18, zorder=2)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(0.9, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(len(names)), names)
        ax.set_ylim(0, RATIO_CAP + 0.1)
        ax.set_ylabel("ε_LB / claimed ε")
        ax.set_title(
            f"{library}: filled = ours, hollow = LDP-Auditor's method (same releases); k = "
            f"{', '.join(map(str, ks))} left to right; ▲ = beyond {RATIO_CAP}·ε (a violated claim)",
            fontsize=9,
        )
    handles = [plt.Line2D([], [], marker="o", ls="", color=col, label=f"ε = {e:g}") for e, col in colors.items()]
    axes[0, 0].legend(handles=handles, loc="lower left", fontsize=8, ncol=len(handles))
    fig.tight_layout()
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    write_bytes_atomic(path, buffer.getvalue())
