"""Report figures (matplotlib, Agg backend) returned as PNG bytes, ready to embed as base64."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from pgc.schemas.report_parts import ReportCurveCorner, ReportCurvePoint  # noqa: E402
from pgc.schemas.shared import ldp_ceiling  # noqa: E402

from . import bar_plots, figure_kit  # noqa: E402
from .bar_plots import verdict_colour  # noqa: E402
from .content import AttackRow, BoundRow, fmt_eps  # noqa: E402
from .figure_kit import legend_below, legend_right, new_figure, wrap  # noqa: E402

DPI = figure_kit.DPI


def _finished(fig, ax, xlabel: str, ylabel: str, title: str) -> bytes:
    """Axis labels, title, a light grid and the legend beside the plot; the figure as PNG bytes."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_right(ax)
    return _png(fig)


def _png(fig) -> bytes:
    return figure_kit.png(fig, DPI)


def headline_figure(summary: list[dict], system_of: dict[str, str] | None = None) -> bytes:
    """The headline bars (:func:`reports.bar_plots.headline`) as PNG bytes."""
    return _png(bar_plots.headline(summary, system_of))


def bounds_figure(rows: list[BoundRow]) -> bytes:
    """All audited bounds (:func:`reports.bar_plots.bounds`) as PNG bytes."""
    return _png(bar_plots.bounds(rows))


def composition_figure(rows: list[BoundRow]) -> bytes:
    """ε_LB against k per (subject, channel), with each row's claim (kε for k full-ε submissions)."""
    fig, axes = new_figure(9.0, 4.2)
    ax = axes[0, 0]
    groups: dict[str, list[BoundRow]] = {}
    for r in rows:
        groups.setdefault(f"{r.subject} · {r.kind.base}", []).append(r)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, rs) in enumerate(groups.items()):
        col = colours[i % len(colours)]
        rs = sorted(rs, key=lambda r: r.k or 1)
        ks = [r.k or 1 for r in rs]
        ax.plot(ks, [r.lower_bound for r in rs], "o-", color=col, label=f"ε_LB {label}")
        claims = [
            (k, r.claimed) for k, r in zip(ks, rs, strict=True) if r.claimed is not None and math.isfinite(r.claimed)
        ]
        if claims:
            ax.plot([k for k, _ in claims], [c for _, c in claims], "x--", color=col, alpha=0.7)
        caps = [(k, r.cap) for k, r in zip(ks, rs, strict=True) if r.cap and math.isfinite(r.cap)]
        if caps:
            ax.plot([k for k, _ in caps], [c for _, c in caps], "_", color="#868e96", markersize=14)
    ax.plot([], [], "x--", color="grey", label="claim (kε for k full-ε submissions)")
    ax.plot([], [], "_", color="#868e96", markersize=14, label="certifiable cap")
    ax.set_xticks(sorted({r.k or 1 for r in rows}))
    return _finished(
        fig, ax, "k submissions from the same environment", "ε", "Composition: observed ε lower bound vs k"
    )


def _attack_groups(rows: list[AttackRow]) -> dict[tuple, list[AttackRow]]:
    """One line per target, channel set, k and candidate count (the first ten): the best attacker at each ε."""
    groups: dict[tuple, list[AttackRow]] = {}
    for r in rows:
        groups.setdefault((r.setting.rsplit("/", 1)[-1], r.channels, r.k or 1, r.candidates), []).append(r)
    out = {}
    for key, rs in list(groups.items())[:10]:
        by_eps: dict = {}
        for r in rs:
            if r.epsilon not in by_eps or r.accuracy > by_eps[r.epsilon].accuracy:
                by_eps[r.epsilon] = r
        out[key] = list(by_eps.values())
    return out


def attack_figure(rows: list[AttackRow]) -> bytes:
    """Accuracy vs ε per attacker (and k), with chance and the ε-LDP ceiling; ε = ∞ drawn at the right edge."""
    finite = sorted({r.epsilon for r in rows if r.epsilon is not None and math.isfinite(r.epsilon)})
    lo = min(finite) if finite else 1.0
    hi = max(finite) if finite else 10.0
    inf_x = hi * 2.5

    def xpos(e):
        return inf_x if e is None or math.isinf(e) else e

    fig, axes = new_figure(9.5, 4.4)
    ax = axes[0, 0]
    ks_cands = set()
    for (setting, channels, k, cands), rs in _attack_groups(rows).items():
        rs = sorted(rs, key=lambda r: xpos(r.epsilon))
        attacker = "best" if len({r.attacker for r in rs}) > 1 else rs[0].attacker
        acc = [r.accuracy for r in rs]
        err = None
        if all(r.ci_low is not None and r.ci_high is not None for r in rs):
            err = np.array(
                [
                    [a - r.ci_low for a, r in zip(acc, rs, strict=True)],
                    [r.ci_high - a for a, r in zip(acc, rs, strict=True)],
                ]
            )
            err = np.clip(err, 0, None)
        ax.errorbar(
            [xpos(r.epsilon) for r in rs],
            acc,
            yerr=err,
            marker="o",
            capsize=3,
            label=f"{attacker} [{channels}] k={k}" + (f" {setting}" if setting else ""),
        )
        if cands:
            ks_cands.add((k, cands))
        chance = next((r.chance for r in rs if r.chance is not None), None)
        if chance is not None:
            ax.axhline(chance, color="grey", ls=":", lw=1)
    grid = np.geomspace(max(lo / 1.5, 1e-3), hi * 1.2, 200)
    for k, cands in sorted(ks_cands):
        ax.plot(
            grid,
            [ldp_ceiling(e, k, cands) for e in grid],
            "--",
            lw=1.2,
            alpha=0.8,
            label=f"ε-LDP ceiling k={k}, |Ψ|={cands}",
        )
    if not ks_cands:
        ceil_pts = sorted((xpos(r.epsilon), r.ceiling) for r in rows if r.ceiling is not None)
        if ceil_pts:
            ax.plot([p[0] for p in ceil_pts], [p[1] for p in ceil_pts], "--", color="black", label="ε-LDP ceiling")
    ax.plot([], [], ":", color="grey", label="chance (best prior-only guess)")
    ax.set_xscale("log")
    ax.set_xticks(finite + [inf_x])
    ax.set_xticklabels([fmt_eps(t) for t in finite] + ["∞"])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_ylim(0, 1.02)
    return _finished(fig, ax, "ε per submission", "attack accuracy", "Attack accuracy vs ε")


def learning_curves_figure(curves: list[dict]) -> bytes:
    fig, axes = new_figure(9.5, 4.4)
    ax = axes[0, 0]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, c in enumerate(curves[:10]):
        col = colours[i % len(colours)]
        mus = c["mu"]
        n = max(m.size for m in mus)
        for m in mus:
            ax.plot(np.arange(m.size) + 10, m, color=col, alpha=0.18, lw=0.6)
        stacked = np.full((len(mus), n), np.nan)
        for j, m in enumerate(mus):
            stacked[j, : m.size] = m
        ax.plot(
            np.arange(n) + 10,
            np.nanmedian(stacked, axis=0),
            color=col,
            lw=1.8,
            label=f"{c['label']} (median of {len(mus)})",
        )
    target = curves[0].get("target") if curves else None
    if target is not None:
        ax.axhline(target, color="black", ls="--", lw=1, label=f"target Θ = {target:g}")
    return _finished(fig, ax, "submission n", "average score μ (eq. 25, window 10)", "Learning curves")


def success_ratio_figure(curves: list[dict]) -> bytes:
    fig, axes = new_figure(9.5, 3.9)
    ax = axes[0, 0]
    for c in curves[:10]:
        ax.step(c["n"], c["ratio"], where="post", label=c["label"])
    ax.set_ylim(-0.02, 1.02)
    return _finished(
        fig, ax, "submission n", "success ratio (eq. 27)", "Success ratio: fraction of trials with FST ≤ n"
    )


def pareto_figure(
    points: list[dict],
    front: set[int],
    utility_name: str,
    privacy_name: str,
    constraint: float | None = None,
    pruned: list[dict] | None = None,
) -> bytes:
    """Utility vs privacy per completed trial; the Pareto front joined; colour = mechanism."""
    fig, axes = new_figure(9.5, 4.6)
    ax = axes[0, 0]
    mechs = sorted({p["mechanism"] for p in points})
    colours = dict(zip(mechs, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    finite_x = [p["privacy"] for p in points + (pruned or []) if math.isfinite(p["privacy"])]
    inf_x = (max(finite_x) * 2.5) if finite_x else 100.0

    def xpos(x):
        return inf_x if math.isinf(x) else x

    for m in mechs:
        ps = [p for p in points if p["mechanism"] == m]
        ax.scatter(
            [xpos(p["privacy"]) for p in ps],
            [p["utility"] for p in ps],
            s=28,
            alpha=0.55,
            color=colours[m],
            label=f"{m} trials",
        )
    if pruned:
        ax.scatter(
            [xpos(p["privacy"]) for p in pruned],
            [p["utility"] for p in pruned],
            marker="x",
            s=22,
            color="#adb5bd",
            label=f"pruned ({len(pruned)}, intermediate value)",
        )
    fp = sorted((p for p in points if p["number"] in front), key=lambda p: xpos(p["privacy"]))
    if fp:
        ax.plot(
            [xpos(p["privacy"]) for p in fp],
            [p["utility"] for p in fp],
            "-",
            color="black",
            lw=1.2,
            drawstyle="steps-post",
            label="Pareto front",
        )
        ax.scatter(
            [xpos(p["privacy"]) for p in fp],
            [p["utility"] for p in fp],
            s=70,
            facecolors="none",
            edgecolors="black",
            linewidths=1.5,
        )
        for p in fp:  # the trial number left of its point, above the front's step
            ax.annotate(
                f"#{p['number']}",
                (xpos(p["privacy"]), p["utility"]),
                fontsize=7,
                xytext=(-6, 5),
                textcoords="offset points",
                ha="right",
            )
    if constraint is not None:
        ax.axhline(constraint, color="#c92a2a", ls="--", lw=1, label=f"constraint ≥ {constraint:g}")
    ax.set_xscale("log")
    ax.margins(y=0.12)
    return _finished(
        fig,
        ax,
        privacy_name + " (lower = more private)",
        utility_name + " (higher = more useful)",
        "Tuning: utility vs privacy",
    )


def adversarial_curve_figure(points: list[ReportCurvePoint]) -> bytes:
    """ε_LB/ε against Δψ (log x), one line per (model, channel, ε): one colour per (channel, ε), the honest
    aggregator dashed, the adversarial one solid."""
    fig, axes = new_figure(9.5, 4.6)
    ax = axes[0, 0]
    groups: dict[tuple, list[ReportCurvePoint]] = {}
    for p in points:
        groups.setdefault((p.model, p.channel, p.epsilon), []).append(p)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    keys = sorted(groups, key=lambda k: (k[0], k[1], math.inf if k[2] is None else k[2]))
    settings = list(dict.fromkeys(k[1:] for k in keys))
    for model, channel, eps in keys:
        pts = sorted(groups[(model, channel, eps)], key=lambda p: p.delta_psi)
        ax.plot(
            [p.delta_psi for p in pts],
            [p.ratio for p in pts],
            marker="o",
            ms=3.5,
            ls="-" if model == "adversarial" else "--",
            color=colours[settings.index((channel, eps)) % len(colours)],
            label=f"{model} · {channel} · ε={fmt_eps(eps)}",
        )
    ax.axhline(1.0, color="black", lw=0.8, ls=":", label="ε_LB = ε (claim reached)")
    ax.set_xscale("log")
    ax.set_xlabel("Δψ = |ψ' − ψ|")
    ax.set_ylabel("ε_LB / ε")
    ax.set_title("Adversarial vs honest aggregator: certified fraction of the claim")
    ax.grid(alpha=0.3, which="both")
    legend_right(ax)
    return _png(fig)


def bandit_regret_figure(curves: list[dict]) -> bytes:
    """Time-averaged group regret against t, one line per algorithm and setting, with its interval band."""
    fig, axes = new_figure(8.4, 4.0)
    ax = axes[0, 0]
    for c in curves:
        if not c["t"]:
            continue
        (line,) = ax.plot(c["t"], c["regret"], label=c["label"], lw=1.6)
        ax.fill_between(c["t"], c["lower"], c["upper"], color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("round t")
    ax.set_ylabel("group regret / t")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    legend_right(ax, frameon=False)
    return _png(fig)


def privacy_cost_figure(cost: list[dict], fit: dict | None) -> bytes:
    """Privacy cost at T (private minus non-private group regret) against M on log-log axes with its
    intervals, the fitted power law, and the theories' exponents drawn through the same first point."""
    pts = [p for p in cost if p["mean"] > 0]
    fig, axes = new_figure(7.6, 4.0)
    ax = axes[0, 0]
    m = np.array([p["n_silos"] for p in pts], dtype=float)
    y = np.array([p["mean"] for p in pts])
    err = np.array([[p["mean"] - p["interval"][0] for p in pts], [p["interval"][1] - p["mean"] for p in pts]])
    ax.errorbar(m, y, yerr=err, fmt="o", color="black", capsize=3, label="privacy cost (mean, interval)")
    if len(pts):
        grid = np.geomspace(m.min(), m.max(), 50)
        if fit is not None and fit.get("intercept") is not None:
            ax.plot(
                grid,
                np.exp(fit["intercept"]) * grid ** fit["exponent"],
                color="#1c7ed6",
                label=f"fit: M^{fit['exponent']:.3g}",
            )
        for (name, exponent), style in zip(
            sorted((fit or {}).get("theory", {}).items()), ("--", ":", "-."), strict=False
        ):
            ax.plot(
                grid,
                y[0] * (grid / m[0]) ** exponent,
                style,
                color="#868e96",
                label=f"{name.removesuffix('_M_exponent').replace('_', ' ')}: M^{exponent:g}",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of silos M")
    ax.set_ylabel("privacy cost at T")
    ax.grid(alpha=0.3, which="both")
    legend_right(ax, frameon=False)
    return _png(fig)


def _tradeoff_panel(ax, curves: list[ReportCurveCorner], alpha: np.ndarray) -> None:
    """One system's claimed curves (one per channel), their certified corners and shaded regions."""
    from scipy.stats import norm

    from audit.certification.curves import profile_tradeoff

    for i, c in enumerate(curves):
        colour = plt.cm.tab10(i % 10)
        channel = c.label.rsplit(" [", 1)[-1].rstrip("]") if " [" in c.label else c.label
        if c.profile_curve is not None:
            p = c.profile_curve
            ax.plot(
                alpha,
                profile_tradeoff(alpha, p.profile),
                color=colour,
                lw=1.4,
                label=f"[{channel}] claimed privacy profile",
            )
            corner = (
                f"[{channel}] certified corner: ε ≥ {fmt_eps(p.profile_epsilon_lower_bound)} at "
                f"δ = {p.profile_delta:.2g} ({c.verdict})"
            )
        else:
            mu = c.mu_curve
            assert mu is not None
            ax.plot(
                alpha,
                norm.cdf(norm.isf(alpha) - mu.claimed_mu),
                color=colour,
                lw=1.4,
                label=f"[{channel}] claimed μ = {fmt_eps(mu.claimed_mu)}",
            )
            corner = f"[{channel}] certified corner: μ ≥ {fmt_eps(mu.mu_lower_bound)} ({c.verdict})"
        ax.plot(
            [c.fpr_upper],
            [c.fnr_upper],
            marker="s",
            ls="none",
            color=verdict_colour(c.verdict),
            markeredgecolor=colour,
            markersize=8,
            label=corner,
        )
        ax.add_patch(plt.Rectangle((0, 0), c.fpr_upper, c.fnr_upper, alpha=0.08, color=colour))
    ax.plot([0, 1], [1, 0], color="#adb5bd", lw=0.8, ls=":", label="no privacy lost (β = 1 − α)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("type I error α (false positive rate)", fontsize=9)
    ax.set_ylabel("type II error β (false negative rate)", fontsize=9)
    ax.grid(alpha=0.3)


def tradeoff_figure(curves: list[ReportCurveCorner]) -> bytes:
    """Curve audits, one panel per audited system (at most eight): each claimed trade-off curve (type I error α
    against type II error β) — a μ-GDP curve T_μ(α) = Φ(Φ⁻¹(1 − α) − μ), or the curve a privacy profile
    promises — and the certified corner (ᾱ, β̄): the test's true rates lie below and left of it with the stated
    confidence, so a corner under the claimed curve is a violation of the curve."""
    systems = figure_kit.panels(curves, lambda c: c.system or c.label.rsplit(" [", 1)[0])[:8]
    ncols = min(3, len(systems))
    nrows = -(-len(systems) // ncols)
    fig, axes = new_figure(4.0 * ncols, 5.6 * nrows, nrows=nrows, ncols=ncols)
    alpha = np.concatenate([np.logspace(-8, -1, 200), np.linspace(0.1, 1.0, 200)])
    for ax, (system, cs) in zip(axes.flat, systems, strict=False):
        _tradeoff_panel(ax, cs, alpha)
        ax.set_title(wrap(system, 40), fontsize=9)
        legend_below(ax, 0.5, width=46)
    for ax in list(axes.flat)[len(systems) :]:
        ax.set_visible(False)
    fig.suptitle("Claimed trade-off curves and certified regions")
    return _png(fig)
