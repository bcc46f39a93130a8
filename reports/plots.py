"""Report figures (matplotlib, Agg backend) returned as PNG bytes, ready to embed as base64."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from schemas.shared import ldp_ceiling  # noqa: E402,F401

from .content import K_IN_NAME, AttackRow, BoundRow, fmt_eps  # noqa: E402,F401

DPI = 96
_VERDICT_COLOURS = {"consistent": "#2b8a3e", "violated": "#c92a2a", "unprotected channel": "#e67700",
                    "inconclusive": "#1971c2"}


def _finished(fig, ax, xlabel: str, ylabel: str, title: str, **legend) -> bytes:
    """Axis labels, title, a light grid and a small legend; the figure as PNG bytes."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, **legend)
    return _png(fig)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _drawable(values: list[float]) -> tuple[list[float], float]:
    """Bar lengths with infinite bounds drawn 15% beyond the largest finite value; that length."""
    finite = [v for v in values if math.isfinite(v)]
    far = 1.15 * max(finite, default=1.0) or 1.0
    return [v if math.isfinite(v) else far for v in values], far


def _verdict_colour(verdict: str) -> str:
    if verdict.startswith("violated"):
        return _VERDICT_COLOURS["violated"]
    return _VERDICT_COLOURS.get(verdict, "#495057")


def _verdict_legend(verdicts) -> list:
    """One legend patch per bar colour drawn, labelled with the verdicts drawn in it (every colour in the
    figure is in its legend, and nothing else)."""
    from matplotlib.patches import Patch

    by_colour: dict[str, list[str]] = {}
    for v in dict.fromkeys(verdicts):
        by_colour.setdefault(_verdict_colour(v), []).append(v)
    order = ["consistent", "inconclusive", "unprotected channel", "violated"]

    def rank(item):
        return min((order.index(v) if v in order else len(order) for v in item[1]), default=len(order))

    return [Patch(color=colour, label=" / ".join(names)) for colour, names in sorted(by_colour.items(), key=rank)]


def headline_figure(summary: list[dict]) -> bytes:
    """Per channel family: the largest certified ε lower bound of each observer (bars, coloured by
    verdict), the claim of the row that bound comes from (black tick; a k-submission row's own claim) and
    the certifiable cap (grey tick)."""
    rows = summary[:15]
    fig, ax = plt.subplots(figsize=(5.6, 0.3 * len(rows) + 1.0))
    y = np.arange(len(rows))[::-1]
    bars, _ = _drawable([r["lower_bound"] for r in rows])
    ax.barh(y, bars, color=[_verdict_colour(r["verdict"]) for r in rows], height=0.62)
    zero = [(yy, _verdict_colour(r["verdict"])) for yy, r in zip(y, rows) if r["lower_bound"] == 0]
    if zero:  # a bound of 0 has no bar: its verdict's colour still shows, as a square at 0
        ax.scatter([0.0] * len(zero), [yy for yy, _ in zero], marker="s", s=40, c=[c for _, c in zero], zorder=3,
                   clip_on=False)
    for yy, r, b in zip(y, rows, bars):
        if not math.isfinite(r["lower_bound"]):
            ax.text(b, yy, " ∞", va="center", fontsize=8)
    drawn = [r.get("worst_claimed", r["claimed"]) for r in rows]  # the claim of the row whose bound is the bar
    claims = [(yy, c) for yy, c in zip(y, drawn) if c is not None and math.isfinite(c)]
    if claims:
        ax.scatter([c for _, c in claims], [yy for yy, _ in claims], marker="|", s=230, color="black", linewidths=2.5,
                   label="claimed ε (of the row drawn)", zorder=3)
    caps = [(yy, r["cap"]) for yy, r in zip(y, rows) if r["cap"] is not None and math.isfinite(r["cap"])]
    if caps:
        ax.scatter([c for _, c in caps], [yy for yy, _ in caps], marker="|", s=180, color="#868e96", linewidths=2,
                   label="certifiable cap", zorder=2)
    handles, _ = ax.get_legend_handles_labels()
    handles += _verdict_legend(r["verdict"] for r in rows)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{r['group'][:22]} · {r['family']}" + _drawn_channel(r) for r in rows], fontsize=8)
    ax.set_xlabel("ε (audited lower bound: bar)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22 if len(rows) > 6 else -0.3), ncol=3,
              fontsize=7, frameon=False)
    return _png(fig)


def _drawn_channel(row: dict) -> str:
    """`` (gradient×3)`` when the bar's row is not the family's own channel (its claim differs)."""
    channel = str(row.get("worst_channel") or "")
    return f" ({channel[:16]})" if channel and channel != row["family"] and K_IN_NAME.search(channel) else ""


def bounds_figure(rows: list[BoundRow]) -> bytes:
    """Horizontal bars: observed ε_LB per row, the claim as a black tick, the certifiable cap as a grey tick."""
    rows = rows[:40]
    fig, ax = plt.subplots(figsize=(8.5, 0.32 * len(rows) + 1.4))
    y = np.arange(len(rows))[::-1]
    lbs, _ = _drawable([r.lower_bound for r in rows])
    ax.barh(y, lbs, color=[_verdict_colour(r.verdict) for r in rows], height=0.6, label="observed ε lower bound")
    finite_claims = [(yy, r.claimed) for yy, r in zip(y, rows) if r.claimed is not None and math.isfinite(r.claimed)]
    if finite_claims:
        ax.scatter([c for _, c in finite_claims], [yy for yy, _ in finite_claims], marker="|", s=260, color="black",
                   linewidths=2.5, label="claimed ε", zorder=3)
    caps = [(yy, r.cap) for yy, r in zip(y, rows) if r.cap is not None and math.isfinite(r.cap)]
    if caps:
        ax.scatter([c for _, c in caps], [yy for yy, _ in caps], marker="|", s=200, color="#adb5bd", linewidths=2,
                   label="certifiable cap (budget)", zorder=2)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{r.subject[:38]} · {r.channel[:26]}" for r in rows], fontsize=8)
    ax.set_xlabel("ε")
    ax.set_title("Claimed ε vs observed lower bound (bar colour = verdict)")
    ax.grid(axis="x", alpha=0.3)
    handles = [h for h, label in zip(*ax.get_legend_handles_labels()) if label != "observed ε lower bound"]
    ax.legend(handles=handles + _verdict_legend(r.verdict for r in rows), loc="lower right", fontsize=8)
    return _png(fig)


def composition_figure(rows: list[BoundRow]) -> bytes:
    """ε_LB against k per (subject, channel), with each row's claim (kε for k full-ε submissions)."""
    from .content import base_channel

    fig, ax = plt.subplots(figsize=(6.5, 4))
    groups: dict[str, list[BoundRow]] = {}
    for r in rows:
        groups.setdefault(f"{r.subject} · {base_channel(r.channel)}", []).append(r)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, rs) in enumerate(groups.items()):
        col = colours[i % len(colours)]
        rs = sorted(rs, key=lambda r: r.k or 1)
        ks = [r.k or 1 for r in rs]
        ax.plot(ks, [r.lower_bound for r in rs], "o-", color=col, label=f"ε_LB {label[:48]}")
        claims = [(k, r.claimed) for k, r in zip(ks, rs) if r.claimed is not None and math.isfinite(r.claimed)]
        if claims:
            ax.plot([k for k, _ in claims], [c for _, c in claims], "x--", color=col, alpha=0.7)
        caps = [(k, r.cap) for k, r in zip(ks, rs) if r.cap and math.isfinite(r.cap)]
        if caps:
            ax.plot([k for k, _ in caps], [c for _, c in caps], "_", color="#868e96", markersize=14)
    ax.plot([], [], "x--", color="grey", label="claim (kε for k full-ε submissions)")
    ax.plot([], [], "_", color="#868e96", markersize=14, label="certifiable cap")
    ax.set_xticks(sorted({r.k or 1 for r in rows}))
    return _finished(fig, ax, "k submissions from the same environment", "ε", "Composition: observed ε lower bound vs k")


def attack_figure(rows: list[AttackRow]) -> bytes:
    """Accuracy vs ε per attacker (and k), with chance and the ε-LDP ceiling; ε = ∞ drawn at the right edge."""
    finite = sorted({r.epsilon for r in rows if r.epsilon is not None and math.isfinite(r.epsilon)})
    lo = min(finite) if finite else 1.0
    hi = max(finite) if finite else 10.0
    inf_x = hi * 2.5

    def xpos(e):
        return inf_x if e is None or math.isinf(e) else e

    fig, ax = plt.subplots(figsize=(7.5, 4.3))
    groups: dict[tuple, list[AttackRow]] = {}
    for r in rows:  # one line per target, channel set, k: the best attacker at each ε
        groups.setdefault((r.setting.rsplit("/", 1)[-1][:30], r.channels, r.k or 1, r.candidates), []).append(r)
    groups = dict(list(groups.items())[:10])
    ks_cands = set()
    for (setting, channels, k, cands), rs in groups.items():
        by_eps: dict = {}
        for r in rs:
            if r.epsilon not in by_eps or r.accuracy > by_eps[r.epsilon].accuracy:
                by_eps[r.epsilon] = r
        rs = sorted(by_eps.values(), key=lambda r: xpos(r.epsilon))
        attacker = "best" if len({r.attacker for r in rs}) > 1 else rs[0].attacker
        xs = [xpos(r.epsilon) for r in rs]
        acc = [r.accuracy for r in rs]
        err = None
        if all(r.ci_low is not None and r.ci_high is not None for r in rs):
            err = np.array([[a - r.ci_low for a, r in zip(acc, rs)], [r.ci_high - a for a, r in zip(acc, rs)]])
            err = np.clip(err, 0, None)
        label = f"{attacker} [{channels}] k={k}" + (f" {setting}" if setting else "")
        ax.errorbar(xs, acc, yerr=err, marker="o", capsize=3, label=label[:60])
        if cands:
            ks_cands.add((k, cands))
        chance = next((r.chance for r in rs if r.chance is not None), None)
        if chance is not None:
            ax.axhline(chance, color="grey", ls=":", lw=1)
    grid = np.geomspace(max(lo / 1.5, 1e-3), hi * 1.2, 200)
    for k, cands in sorted(ks_cands):
        ax.plot(grid, [ldp_ceiling(e, k, cands) for e in grid], "--", lw=1.2, alpha=0.8,
                label=f"ε-LDP ceiling k={k}, |Ψ|={cands}")
    if not ks_cands:
        ceil_pts = [(xpos(r.epsilon), r.ceiling) for r in rows if r.ceiling is not None]
        if ceil_pts:
            ceil_pts.sort()
            ax.plot([p[0] for p in ceil_pts], [p[1] for p in ceil_pts], "--", color="black", label="ε-LDP ceiling")
    ax.plot([], [], ":", color="grey", label="chance (best prior-only guess)")
    ax.set_xscale("log")
    ticks = finite + [inf_x]
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt_eps(t) for t in finite] + ["∞"])
    ax.set_ylim(0, 1.02)
    return _finished(fig, ax, "ε per submission", "attack accuracy", "Attack accuracy vs ε", loc="best")


def learning_curves_figure(curves: list[dict]) -> bytes:
    fig, ax = plt.subplots(figsize=(7.5, 4.3))
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
        ax.plot(np.arange(n) + 10, np.nanmedian(stacked, axis=0), color=col, lw=1.8,
                label=f"{c['label'][:70]} (median of {len(mus)})")
    target = curves[0].get("target") if curves else None
    if target is not None:
        ax.axhline(target, color="black", ls="--", lw=1, label=f"target Θ = {target:g}")
    return _finished(fig, ax, "submission n", "average score μ (eq. 25, window 10)", "Learning curves", loc="upper left")


def success_ratio_figure(curves: list[dict]) -> bytes:
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for c in curves[:10]:
        ax.step(c["n"], c["ratio"], where="post", label=c["label"][:70])
    ax.set_ylim(-0.02, 1.02)
    return _finished(fig, ax, "submission n", "success ratio (eq. 27)", "Success ratio: fraction of trials with FST ≤ n",
                     loc="upper left")


def pareto_figure(points: list[dict], front: set[int], utility_name: str, privacy_name: str,
                  constraint: float | None = None, pruned: list[dict] | None = None) -> bytes:
    """Utility vs privacy per completed trial; the Pareto front joined; colour = mechanism."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    mechs = sorted({p["mechanism"] for p in points})
    colours = dict(zip(mechs, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    finite_x = [p["privacy"] for p in points + (pruned or []) if math.isfinite(p["privacy"])]
    inf_x = (max(finite_x) * 2.5) if finite_x else 100.0

    def xpos(x):
        return inf_x if math.isinf(x) else x

    for m in mechs:
        ps = [p for p in points if p["mechanism"] == m]
        ax.scatter([xpos(p["privacy"]) for p in ps], [p["utility"] for p in ps], s=28, alpha=0.55,
                   color=colours[m], label=f"{m} trials")
    if pruned:
        ax.scatter([xpos(p["privacy"]) for p in pruned], [p["utility"] for p in pruned], marker="x", s=22,
                   color="#adb5bd", label=f"pruned ({len(pruned)}, intermediate value)")
    fp = sorted((p for p in points if p["number"] in front), key=lambda p: xpos(p["privacy"]))
    if fp:
        ax.plot([xpos(p["privacy"]) for p in fp], [p["utility"] for p in fp], "-", color="black", lw=1.2,
                drawstyle="steps-post", label="Pareto front")
        ax.scatter([xpos(p["privacy"]) for p in fp], [p["utility"] for p in fp], s=70, facecolors="none",
                   edgecolors="black", linewidths=1.5)
        for p in fp:
            ax.annotate(f"#{p['number']}", (xpos(p["privacy"]), p["utility"]), fontsize=7,
                        xytext=(4, 4), textcoords="offset points")
    if constraint is not None:
        ax.axhline(constraint, color="#c92a2a", ls="--", lw=1, label=f"constraint ≥ {constraint:g}")
    ax.set_xscale("log")
    return _finished(fig, ax, privacy_name + " (lower = more private)", utility_name + " (higher = more useful)",
                     "Tuning: utility vs privacy", loc="best")


def adversarial_curve_figure(points: list[dict]) -> bytes:
    """ε_LB/ε against Δψ (log x), one line per (model, channel, ε); honest dashed, adversarial solid."""
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    groups: dict[tuple, list[dict]] = {}
    for p in points:
        groups.setdefault((p["model"], p["channel"], p["epsilon"]), []).append(p)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    keys = sorted(groups, key=lambda k: (k[0], k[1], math.inf if k[2] is None else k[2]))
    for i, key in enumerate(keys):
        model, channel, eps = key
        pts = sorted(groups[key], key=lambda p: p["delta_psi"])
        ax.plot([p["delta_psi"] for p in pts], [p["ratio"] for p in pts], marker="o", ms=3.5,
                ls="-" if model == "adversarial" else "--", color=colours[i % len(colours)],
                label=f"{model} · {channel} · ε={fmt_eps(eps)}")
    ax.axhline(1.0, color="black", lw=0.8, ls=":", label="ε_LB = ε (claim reached)")
    ax.set_xscale("log")
    ax.set_xlabel("Δψ = |ψ' − ψ|")
    ax.set_ylabel("ε_LB / ε")
    ax.set_title("Adversarial vs honest aggregator: certified fraction of the claim")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="best")
    return _png(fig)


def bandit_regret_figure(curves: list[dict]) -> bytes:
    """Time-averaged group regret against t, one line per algorithm and setting, with its interval band."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for c in curves:
        if not c["t"]:
            continue
        line, = ax.plot(c["t"], c["regret"], label=c["label"], lw=1.6)
        ax.fill_between(c["t"], c["lower"], c["upper"], color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("round t")
    ax.set_ylabel("group regret / t")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    return _png(fig)


def privacy_cost_figure(cost: list[dict], fit: dict | None) -> bytes:
    """Privacy cost at T (private minus non-private group regret) against M on log-log axes with its
    intervals, the fitted power law, and the theories' exponents drawn through the same first point."""
    pts = [p for p in cost if p["mean"] > 0]
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    m = np.array([p["n_silos"] for p in pts], dtype=float)
    y = np.array([p["mean"] for p in pts])
    err = np.array([[p["mean"] - p["interval"][0] for p in pts], [p["interval"][1] - p["mean"] for p in pts]])
    ax.errorbar(m, y, yerr=err, fmt="o", color="black", capsize=3, label="privacy cost (mean, interval)")
    if len(pts):
        grid = np.geomspace(m.min(), m.max(), 50)
        if fit is not None and fit.get("intercept") is not None:
            ax.plot(grid, np.exp(fit["intercept"]) * grid ** fit["exponent"], color="#1c7ed6",
                    label=f"fit: M^{fit['exponent']:.3g}")
        for (name, exponent), style in zip(sorted((fit or {}).get("theory", {}).items()), ("--", ":", "-.")):
            ax.plot(grid, y[0] * (grid / m[0]) ** exponent, style, color="#868e96", label=f"{name.removesuffix('_M_exponent').replace('_', ' ')}: M^{exponent:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of silos M")
    ax.set_ylabel("privacy cost at T")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, frameon=False)
    return _png(fig)


def tradeoff_figure(curves: list[dict]) -> bytes:
    """Curve audits: each claimed trade-off curve (type I error α against type II error β) — a μ-GDP curve
    T_μ(α) = Φ(Φ⁻¹(1 − α) − μ), or the curve a privacy profile promises — and the certified corner (ᾱ, β̄):
    the test's true rates lie below and left of it with the stated confidence, so a corner under the claimed
    curve is a violation of the curve."""
    from audit.curves import profile_tradeoff
    from scipy.stats import norm

    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    alpha = np.concatenate([np.logspace(-8, -1, 200), np.linspace(0.1, 1.0, 200)])
    for i, c in enumerate(curves[:8]):
        colour = plt.cm.tab10(i % 10)
        if "profile" in c:
            ax.plot(alpha, profile_tradeoff(alpha, c["profile"]), color=colour, lw=1.4,
                    label=f"{c['label']}: claimed privacy profile")
            corner = (f"certified corner: ε ≥ {fmt_eps(c['profile_epsilon_lower_bound'])} at "
                      f"δ = {c['profile_delta']:.2g} ({c['verdict']})")
        else:
            ax.plot(alpha, norm.cdf(norm.isf(alpha) - c["claimed_mu"]), color=colour, lw=1.4,
                    label=f"{c['label']}: claimed μ = {fmt_eps(c['claimed_mu'])}")
            corner = f"certified corner: μ ≥ {fmt_eps(c['mu_lower_bound'])} ({c['verdict']})"
        ax.plot([c["fpr_upper"]], [c["fnr_upper"]], marker="s", ls="none", color=_verdict_colour(c["verdict"]),
                markeredgecolor=colour, markersize=8, label=corner)
        ax.add_patch(plt.Rectangle((0, 0), c["fpr_upper"], c["fnr_upper"], alpha=0.08, color=colour))
    ax.plot([0, 1], [1, 0], color="#adb5bd", lw=0.8, ls=":", label="no privacy lost (β = 1 − α)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    return _finished(fig, ax, "type I error α (false positive rate)", "type II error β (false negative rate)",
                     "Claimed trade-off curves and certified regions", loc="upper right")
