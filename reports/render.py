"""Render report content as one self-contained HTML page, Markdown (with PNGs beside it) and a JSON summary.

The HTML page has no external resource at all: styles inline, figures as ``data:image/png;base64``,
no script. The Markdown references the same figures as files in ``DIR/figures/``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
import re
from dataclasses import asdict
from pathlib import Path

import contextlib

import schemas

from .content import (PAPER_HORIZON, SUMMARY_MAX_ROWS, Findings, ReportContent, base_channel, best_attacks,
                      fmt_eps, is_bandit_audit, summary_rows)
from . import plots

FORMAT = "pgc-report/1"

_CSS = """
body{font-family:-apple-system,'Segoe UI',Roboto,'DejaVu Sans',Arial,sans-serif;margin:0;background:#f8f9fa;color:#212529}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px;background:#fff}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;border-bottom:2px solid #dee2e6;padding-bottom:4px;margin-top:36px}
h3{font-size:16px;margin-top:22px}.sub{color:#6c757d;font-size:13px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:8px 0 14px}
th,td{border:1px solid #dee2e6;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#f1f3f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v-consistent{color:#2b8a3e;font-weight:600}.v-violated{color:#c92a2a;font-weight:700}
.v-unprotected{color:#e67700;font-weight:700}
.warn{border-left:5px solid #adb5bd;background:#f8f9fa;padding:8px 12px;margin:8px 0;font-size:14px}
.warn.critical{border-color:#c92a2a;background:#fff5f5}.warn.warning{border-color:#e67700;background:#fff9db}
.warn.info{border-color:#1971c2;background:#e7f5ff}.warn b{display:block;margin-bottom:2px}
figure{margin:10px 0 18px}figure img{max-width:100%;border:1px solid #e9ecef}
figcaption{font-size:12px;color:#6c757d}
.verdict-box{font-size:15px;padding:10px 14px;border-radius:4px;background:#f1f3f5;margin:12px 0}
code{background:#f1f3f5;padding:1px 4px;border-radius:3px;font-size:12px}
.first{display:grid;grid-template-columns:minmax(0,1.05fr) minmax(0,1fr);gap:18px;align-items:start}
.first table{font-size:12px;margin:0}.first td:first-child{white-space:nowrap}.first th,.first td{padding:3px 6px}.first figure{margin:0}
.verdict-card{font-size:15px;padding:10px 14px;border-radius:6px;margin:10px 0 12px;border-left:6px solid #2b8a3e;
background:#ebfbee}.verdict-card.bad{border-color:#c92a2a;background:#fff5f5}
.verdict-card.side{border-color:#e67700;background:#fff9db}.verdict-card.none{border-color:#adb5bd;background:#f1f3f5}
.verdict-card small{display:block;color:#495057;font-size:12px;margin-top:3px}
details{border:1px solid #dee2e6;border-radius:4px;margin:8px 0;padding:0 12px}
details>summary{cursor:pointer;font-size:17px;font-weight:600;padding:8px 0}
details[open]>summary{border-bottom:1px solid #dee2e6;margin-bottom:8px}
details .lead{color:#495057;font-style:italic}
details.reference{background:#f8f9fa}
"""


def _esc(x) -> str:
    return html.escape(str(x), quote=True)


_MD_SPECIAL = re.compile(r"([\\`*_|~])")
_MD_LINK = re.compile(r"(\])([(:\[])|(!)(\[)")
_MD_BLOCK_START = re.compile(r"^([#>+=-]|\d+[.)])(?=\s|$)")


def _md(x) -> str:
    """Text copied into Markdown as text: one line, HTML special characters as entities, emphasis,
    code, table and escape characters backslash-escaped, link/image/reference syntax (``](``, ``]:``,
    ``![``) and block markers at the start broken: an input cannot inject links, images, raw HTML or
    new blocks."""
    text = " ".join(str(x).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _MD_LINK.sub(lambda m: (m.group(1) + "\\" + m.group(2)) if m.group(1) is not None else "!\\[", text)
    return _MD_BLOCK_START.sub(r"\\\1", text)


def _safe_name(name: str) -> str:
    """A figure file name made of safe characters only."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", str(name)).lstrip(".") or "figure"
    return name if name.lower().endswith(".png") else name + ".png"


def _vclass(verdict: str) -> str:
    if verdict.startswith("violated"):
        return "v-violated"
    if verdict.startswith("unprotected"):
        return "v-unprotected"
    return "v-consistent"


def _f(x, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, (int,)) and not isinstance(x, bool):
        return f"{x:,}"
    return fmt_eps(float(x), digits)


class _Doc:
    """Builds HTML and Markdown side by side."""

    def __init__(self, out_dir: Path):
        self.html: list[str] = []
        self.md: list[str] = []
        self.figures: dict[str, bytes] = {}
        self.out_dir = out_dir

    def heading(self, text: str, level: int = 2, anchor: str | None = None) -> None:
        aid = f' id="{anchor}"' if anchor else ""
        self.html.append(f"<h{level}{aid}>{_esc(text)}</h{level}>")
        self.md.append(f"\n{'#' * level} {_md(text)}\n")

    def para(self, text: str, cls: str | None = None) -> None:
        c = f' class="{cls}"' if cls else ""
        self.html.append(f"<p{c}>{_esc(text)}</p>")
        self.md.append(_md(text) + "\n")

    def table(self, header: list[str], rows: list[list], numeric: set[int] | None = None,
              classes: list[dict[int, str]] | None = None) -> None:
        numeric = numeric or set()
        h = ["<table><thead><tr>" + "".join(f"<th>{_esc(c)}</th>" for c in header) + "</tr></thead><tbody>"]
        for i, row in enumerate(rows):
            cells = []
            for j, cell in enumerate(row):
                cls = []
                if j in numeric:
                    cls.append("n")
                if classes and j in classes[i]:
                    cls.append(classes[i][j])
                attr = f' class="{" ".join(cls)}"' if cls else ""
                cells.append(f"<td{attr}>{_esc(cell)}</td>")
            h.append("<tr>" + "".join(cells) + "</tr>")
        h.append("</tbody></table>")
        self.html.append("".join(h))
        md = ["| " + " | ".join(_md(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        for row in rows:
            md.append("| " + " | ".join(_md(c) for c in row) + " |")
        self.md.append("\n".join(md) + "\n")

    def figure(self, name: str, png: bytes, caption: str) -> None:
        name = _safe_name(name)
        stem, n = name[:-4], 2
        while name in self.figures:  # two inputs with the same label: each figure keeps its own file
            name, n = f"{stem}_{n}.png", n + 1
        self.figures[name] = png
        b64 = base64.b64encode(png).decode("ascii")
        self.html.append(f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{b64}">'
                         f"<figcaption>{_esc(caption)}</figcaption></figure>")
        self.md.append(f"![{_md(caption)}](figures/{name})\n\n*{_md(caption)}*\n")

    def warning(self, level: str, title: str, text: str) -> None:
        self.html.append(f'<div class="warn {_esc(level)}"><b>{_esc(title)}</b>{_esc(text)}</div>')
        icon = {"critical": "🛑", "warning": "⚠️", "info": "ℹ️"}.get(level, "•")
        self.md.append(f"> {icon} **{_md(title)}.** {_md(text)}\n")

    def raw_html(self, text: str) -> None:
        self.html.append(text)

    @contextlib.contextmanager
    def section(self, title: str, lead: str, anchor: str, *, level: int = 2, cls: str = "", opened: bool = False):
        """A folded section: ``<details>`` whose summary is ``title``, opening with the one sentence
        ``lead`` that says what it shows; in Markdown a heading and the sentence."""
        c = f' class="{cls}"' if cls else ""
        o = " open" if opened else ""
        self.html.append(f'<details id="{_esc(anchor)}"{c}{o}><summary>{_esc(title)}</summary>'
                         f'<p class="lead">{_esc(lead)}</p>')
        self.md.append(f"\n{'#' * level} {_md(title)}\n\n*{_md(lead)}*\n")
        try:
            yield
        finally:
            self.html.append("</details>")


def verdict_rows(f: Findings):
    """The bound rows the overall verdict reads: with p-values present, only the rows that stay
    significant after Holm over the whole family (family-wise error ≤ α); rows without a p-value are
    outside the family. Without any p-value every row's own verdict is read, uncorrected."""
    if f.family.get("size"):
        return [b for b in f.bounds if b.holm_significant]
    return list(f.bounds)


def overall_verdict(f: Findings) -> str:
    bounds = verdict_rows(f)
    if any(b.verdict.startswith("violated") and not b.outside_claim for b in bounds) \
            or any(a.above_ceiling and not a.uses_side_channel for a in f.attacks) \
            or any(a["above_ceiling"] and a["covered"] for a in f.bandit_attacks):
        return "VIOLATED — at least one output leaks more than its ε claim allows."
    if any(b.verdict.startswith("violated") for b in bounds) \
            or any(a.above_ceiling and a.uses_side_channel for a in f.attacks) \
            or any(a["above_ceiling"] for a in f.bandit_attacks):
        return ("CLAIM EXCEEDED THROUGH SIDE CHANNELS — the noisy gradient is consistent with its ε, but the score/timing "
                "released beside it leak more than ε about the environment.")
    if any(b.verdict.startswith("unprotected") for b in bounds):
        return "CLAIM HOLDS FOR THE GRADIENT, BUT SIDE CHANNELS LEAK — the released score/timing is not covered by ε."
    if f.bounds:
        return "CONSISTENT — no audited output exceeds its claim at the stated confidence (a lower bound cannot prove the claim)."
    return "NO AUDIT GIVEN — this report shows utility and tuning only; it makes no privacy finding."


def _verdict_class(verdict: str) -> str:
    if verdict.startswith("VIOLATED"):
        return "bad"
    if verdict.startswith("CLAIM"):
        return "side"
    if verdict.startswith("NO AUDIT"):
        return "none"
    return ""


def _summary_table(doc: _Doc, f: Findings, limit: int = SUMMARY_MAX_ROWS) -> list[dict]:
    rows = summary_rows(f)
    shown = rows[:limit]
    if not shown:
        doc.para("No audit was given, so there is no bound to summarise.")
        return rows
    doc.table(["observer", "channel", "claimed ε", "audited ε ≥", "cap", "verdict"],
              [[r["group"], r["family"], _f(r["claimed"]) + ("*" if len(r["claims"]) > 1 else ""),
                _f(r["lower_bound"]), _f(r["cap"]) + ("†" if r["budget_limited"] else ""), r["verdict"]]
               for r in shown], numeric={2, 3, 4}, classes=[{5: _vclass(r["verdict"])} for r in shown])
    notes = []
    if any(len(r["claims"]) > 1 for r in shown):
        notes.append("* per-submission claim; the group also holds k-submission rows (claim kε)")
    if any(r["budget_limited"] for r in shown):
        notes.append("† the bound reaches the cap: the sample budget, not the system, limited it")
    if len(rows) > limit:
        notes.append(f"{len(rows) - limit} further group(s) are in the full table below")
    if notes:
        doc.para("; ".join(notes) + ".", cls="sub")
    return rows


def _first_screen(doc: _Doc, c: ReportContent, verdict: str) -> None:
    """Verdict card, summary table and headline figure: what a reader needs in the first minute."""
    f = c.own
    n_ref = sum(1 for s in c.sources if s.reference)
    note = (f"From this run's {len(c.sources) - n_ref} input(s)"
            + (f"; {n_ref} committed reference result(s) are shown apart in the References section"
               + (" (federated-bandit results in their own section, marked reference)." if c.reference.bandit_regret
                  or c.reference.bandit_attacks else ".") if n_ref else "."))
    doc.raw_html(f"<div class='verdict-card {_verdict_class(verdict)}'><b>Verdict:</b> {_esc(verdict)}"
                 f"<small>{_esc(note)}</small></div>")
    doc.md.append(f"**Verdict:** {_md(verdict)}\n\n*{_md(note)}*\n")
    doc.raw_html("<div class='first'><div>")
    doc.md.append("\n## Summary\n")
    rows = _summary_table(doc, f)
    doc.raw_html("</div><div>")
    if rows:
        doc.figure("headline.png", plots.headline_figure(rows),
                   "Per observer and channel: the largest audited ε lower bound (bar, colour = verdict), the claimed ε "
                   "(black tick) and the largest ε the sample budget can certify (grey tick).")
    doc.raw_html("</div></div>")


def _warnings(doc: _Doc, f: Findings, anchor: str = "warnings", level: int = 2) -> None:
    if not f.warnings:
        return
    worst = max(f.warnings, key=lambda w: {"critical": 2, "warning": 1}.get(w["level"], 0))
    with doc.section(f"Warnings ({len(f.warnings)})",
                     f"What needs attention in these results, most severe first: {worst['title']}.", anchor, level=level):
        for w in sorted(f.warnings, key=lambda w: -{"critical": 2, "warning": 1}.get(w["level"], 0)):
            doc.warning(w["level"], w["title"], w["text"])


def _protection(doc: _Doc, c: ReportContent) -> None:
    """Which channels the audited runs protect (pgc.protect) and the total ε their claim covers."""
    if not c.protection:
        return
    with doc.section("Protection", "Which channels beside the gradient the audited configurations protect, and the "
                     "total ε their claim covers.", "protection"):
        doc.para("Mitigations of the channels beside the gradient (privatized score, fixed schedule, shuffler; "
                 "docs/README-mitigations.md). The claim is the TOTAL ε = ε_gradient + ε_score per agent; the audits "
                 "of these configurations compare every channel with it.")
        doc.table(["source", "subject", "protected channels", "total ε", "ε gradient", "ε score"],
                  [[p["source"], p["subject"], ", ".join(p["protect"]), fmt_eps(p["total_epsilon"]),
                    fmt_eps(p["gradient_epsilon"]), fmt_eps(p["score_epsilon"])] for p in c.protection])


def _mitigation_costs(doc: _Doc, c: ReportContent) -> None:
    """What each mitigation costs in utility: success and median FST with and without it."""
    if not c.mitigation_costs:
        return
    with doc.section("Utility cost of the mitigations", "What each channel mitigation costs in learning: success and "
                     "median FST with and without it, on the same seeds.", "mitigation-costs"):
        _mitigation_table(doc, c)


def _mitigation_table(doc: _Doc, c: ReportContent) -> None:
    doc.para("Replication-style runs with and without each mitigation, the same seeds in every variant. "
             "Aggregator columns: eq. 26 on the scores the aggregator sees (privatized under 'score', where the "
             "trial also stops: a noisy trailing mean crosses 195 early); true columns: eq. 26 on the true scores "
             "(evaluation only). 'Run to cap' variants train to the cap without the aggregator's stop; their true "
             "FST is what the budget split costs the learning. Ticks: environment-step clock at the true success "
             "(the fixed schedule's cost in time).")
    for m in c.mitigation_costs:
        reading = f", reading {m['reading']}" if m.get("reading") else ""
        cap = f", cap {m['cap']:,}" if isinstance(m.get("cap"), int) else ""
        doc.heading(f"{m['source']}{reading}{cap}", 3)
        rows = []
        for r in m["rows"]:
            agg = "—" if r["successes"] is None else f"{r['successes']}/{r['trials']}"
            true = "—" if r["true_successes"] is None else f"{r['true_successes']}/{r['trials']}"
            ci = r.get("median_true_fst_ci")
            ci_text = f" [{_f(ci[0], 6)}, {_f(ci[1], 6)}]" if isinstance(ci, list) and len(ci) == 2 else ""
            rows.append([r["mechanism"], fmt_eps(r["epsilon"]), r["variant"],
                         f"{fmt_eps(r['gradient_epsilon'])} + {fmt_eps(r['score_epsilon'])}", agg,
                         _f(r["median_fst"], 6), true, _f(r["median_true_fst"], 6) + ci_text,
                         _f(r["median_ticks_at_success"], 7)])
        doc.table(["mechanism", "ε", "variant", "ε gradient + score", "success (aggregator)",
                   "median FST (aggregator)", "true success", "median true FST [95% CI]", "median ticks at success"],
                  rows, numeric={1, 4, 5, 6, 7, 8})
        if m.get("command"):
            doc.para(f"Command: {m['command']}")


def _bounds(doc: _Doc, f: Findings, anchor: str = "headline", level: int = 2) -> None:
    if not f.bounds:
        return
    with doc.section(f"All audited bounds ({len(f.bounds)} rows)", "Every certified ε lower bound behind the summary, "
                     "one row per audited output and pair, with its budget, p-value and Holm result.", anchor,
                     level=level):
        doc.para("Each row is one audited output: a mechanism (black-box canaries) or one channel of the transcript "
                 "(gradient, score, timing, all together) for a pair of environments. ε_LB is a lower bound that holds "
                 "with the stated confidence; the certifiable cap is the largest bound a perfect test could give with "
                 "the same number of samples, so an ε_LB near the cap means the budget, not the mechanism, limited it.")
        _family(doc, f)
        rows, classes = [], []
        for b in f.bounds:
            ratio = (b.lower_bound / b.claimed) if b.claimed and math.isfinite(b.claimed) and b.claimed > 0 else None
            budget = f"{b.samples:,}/side" if b.samples else "—"
            holm = "—" if b.holm_significant is None else ("significant" if b.holm_significant else "not significant")
            rows.append([b.subject + (" (adversarial)" if b.model == "adversarial" else ""), b.channel, _f(b.claimed),
                         _f(b.lower_bound), _f(ratio, 2),
                         f"{b.confidence:.0%}" if b.confidence else "—", _f(b.cap), budget,
                         b.verdict + (" · budget-limited" if b.budget_limited else "") + " (each valid alone)",
                         _f(b.p_value, 3), holm,
                         "; ".join(x for x in [b.test, *b.notes] if x)])
            classes.append({8: _vclass(b.verdict)})
        doc.table(["subject", "channel", "claimed ε", "observed ε_LB", "ε_LB/ε", "confidence", "certifiable cap",
                   "budget", "verdict", "p-value", "after Holm", "test"], rows, numeric={2, 3, 4, 6, 9}, classes=classes)
        prefix = "" if anchor == "headline" else anchor + "_"
        doc.figure(f"{prefix}bounds.png", plots.bounds_figure(f.bounds),
                   "Observed ε lower bound per audited output (bars), the claim (black tick) and the certifiable cap "
                   "(grey tick).")

        def base(b):
            return (b.subject, base_channel(b.channel))

        multi = {base(b) for b in f.bounds if b.k and b.k > 1}
        comp = [b for b in f.bounds if base(b) in multi]
        if comp and len({b.k or 1 for b in comp}) > 1:
            doc.heading("Composition: ε_LB vs k", level + 1, anchor=f"{prefix}composition")
            doc.para("k submissions made in the same environment: the guarantee for the environment degrades with k "
                     "(basic composition gives kε). The bound rising above the per-submission claim is expected; it is "
                     "a finding when the system advertises ε per environment or per agent while agents submit "
                     "repeatedly.")
            doc.figure(f"{prefix}composition.png", plots.composition_figure(comp),
                       "Observed ε lower bound against k with kε (dashed).")


def _family(doc: _Doc, f: Findings) -> None:
    fam = f.family or {}
    size, excluded = fam.get("size", 0), fam.get("excluded", 0)
    if not size:
        doc.para(f"Family-wise verdict: no row carries a p-value, so the overall verdict reads "
                 f"each of the {len(f.bounds)} row(s) at its own confidence, without a correction for multiple rows.")
        return
    sig = fam.get("significant", [])
    shown = "; ".join(f"{x['subject']} · {x['channel']}" for x in sig[:6]) + ("; …" if len(sig) > 6 else "")
    doc.para(f"Family-wise verdict: {size} row(s) in the family, tested together with Holm's method at family level "
             f"α = {fam.get('alpha', 0.05):.3g} (each row's p-value is for H0 \"true ε ≤ the row's claim\"; for "
             f"unprotected channels, when given, \"ε ≤ 0\"). Rows significant after Holm: {len(sig)}"
             + (f" — {shown}" if sig else "") + ". Only these enter the overall verdict; the per-row bounds and "
             "verdicts below are each valid alone at their own confidence (p-values in the test column)."
             + (f" {excluded} row(s) without a p-value are shown but excluded from the family-wise verdict."
                if excluded else ""))


def _system_audits(doc: _Doc, f: Findings, anchor: str = "system-audits", level: int = 2) -> None:
    headers = [h for h in f.system_audits if not is_bandit_audit(h)]  # bandit systems: _bandit
    if not headers:
        return
    with doc.section("System audits: claimed, accountant and audited ε", "For each audited system, the ε it claims, "
                     "the ε an accountant computes and the ε the audit certifies, per channel.", anchor, level=level):
        _system_audit_tables(doc, f, headers)


def _system_audit_tables(doc: _Doc, f: Findings, headers: list[dict]) -> None:
    for h in headers:
        acc = h["accountant"]
        who = (f"pair {h['pair']}" if h["pair"] else f"secret {h['secret']} vs {h['secret_prime']}")
        doc.para(f"{h['system']} ({_role(h)}): {who}, broadcast {h['broadcast']}; claim "
                 f"ε = {fmt_eps(h['claim_epsilon'])}, δ = {h['claim_delta']:.3g} covering "
                 f"{', '.join(h['covers']) or 'no channel'}; {h['samples_per_side']:,} samples per side at "
                 f"{h['confidence']:.0%} confidence, seed {h['seed']}; verdict: {h['verdict']}."
                 + (f" Accountant: ε = {fmt_eps(acc['epsilon'])}, δ = {acc['delta']:.3g} ({acc['description']})."
                    if acc else ""))
        rows = [b for b in f.bounds if b.source == h["source"]]
        doc.table(["channel", "claimed ε", "accountant ε", "audited ε ≥", "cap", "p-value", "verdict", "test"],
                  [[b.channel, _f(b.claimed), _f(b.accountant), _f(b.lower_bound), _f(b.cap), _f(b.p_value),
                    b.verdict, "; ".join(x for x in [b.test, *b.notes] if x)] for b in rows],
                  numeric={1, 2, 3, 4, 5}, classes=[{6: _vclass(b.verdict)} for b in rows])


def _interval_text(v: list[float] | None, digits: int = 3) -> str:
    return f"[{_f(v[0], digits)}, {_f(v[1], digits)}]" if v and len(v) == 2 else "—"


def _theory_name(key: str) -> str:
    """A theory's key in the fit as words: "zhou_chowdhury_M_exponent" -> "zhou chowdhury"."""
    return key.removesuffix("_M_exponent").removesuffix("_exponent").replace("_", " ")


def _attack_reading(a: dict) -> str:
    if a["above_ceiling"]:
        return "above the ceiling" + ("" if a["covered"] else " (channel outside the claim)")
    return "above chance, within the ceiling" if a["above_chance"] else "no better than chance"


def _role(item: dict) -> str:
    return item["source"] + (" (reference)" if item.get("reference") else "")


def _bandit(doc: _Doc, c: ReportContent, anchor: str = "bandit", level: int = 2) -> None:
    """One section for the federated linear bandits: regret, privacy cost, attacks and the system audits of
    the bandit systems, from the run's own inputs and the committed references together (each row names
    its source; the verdicts stay apart, each in its own group)."""
    f = Findings(bounds=c.own.bounds + c.reference.bounds,
                 bandit_regret=c.own.bandit_regret + c.reference.bandit_regret,
                 bandit_attacks=c.own.bandit_attacks + c.reference.bandit_attacks)
    own_audits = [h for h in c.own.system_audits if is_bandit_audit(h)]
    audits = own_audits + [{**h, "reference": True} for h in c.reference.system_audits if is_bandit_audit(h)]
    if not f.bandit_regret and not f.bandit_attacks and not audits:
        return
    with doc.section("Federated linear bandits", "What privacy costs the federated linear bandits in regret, how that "
                     "cost grows with the number of silos M, and what an attacker or an auditor learns from what "
                     "they release.", anchor, level=level):
        for r in f.bandit_regret:
            st = r["settings"]
            doc.heading(f"Regret ({r['label'] or r['source']})", level + 1)
            doc.para(f"{_role(r)}: M = {st.get('n_silos', '—')} silos, horizon T = {st.get('horizon', '—')}, "
                     f"{st.get('n_arms', '—')} arms in dimension {st.get('dim', '—')}, {st.get('runs', '—')} runs; "
                     + str(st.get("regret", "time-averaged group regret with its interval over runs")) + ".")
            doc.table(["algorithm", "M", "ε", "δ", "σ", "mean syncs", "group regret at T", "interval"],
                      [[c["label"], c["n_silos"], "—" if c["epsilon"] is None else _f(c["epsilon"]), _f(c["delta"]),
                        _f(c["sigma"]), _f(c["mean_syncs"], 4), _f(c["final"], 6), _interval_text(c["final_interval"], 6)]
                       for c in r["curves"]], numeric={1, 2, 3, 4, 5, 6})
            if r["plot_png"]:
                doc.figure(f"bandit_regret_{r['source']}.png", r["plot_png"],
                           f"{r['source']}: regret curves (the PNG written beside the result).")
            elif r["curves"]:
                doc.figure(f"bandit_regret_{r['source']}.png", plots.bandit_regret_figure(r["curves"]),
                           f"{r['source']}: time-averaged group regret against t, with its interval band.")
            if r["privacy_cost"]:
                fit = r["fit"]
                doc.table(["M", "privacy cost at T", "interval", "private regret at T", "non-private regret at T"],
                          [[p["n_silos"], _f(p["mean"], 6), _interval_text(p["interval"], 6), _f(p["private"], 6),
                            _f(p["nonprivate"], 6)] for p in r["privacy_cost"]], numeric={0, 1, 3, 4})
                if fit is not None:
                    lo, hi = fit["interval"]
                    theory = "; ".join(f"{_theory_name(name)} M^{_f(e)} ({'inside' if lo <= e <= hi else 'outside'} "
                                       "the interval)" for name, e in sorted(fit["theory"].items()))
                    doc.para(f"Privacy cost ∝ M^b: fitted exponent b = {_f(fit['exponent'])} "
                             f"{_interval_text(fit['interval'])}"
                             + (f" ({fit['level']:.0%} interval" if fit["level"] else " (interval")
                             + (f", {fit['resamples']:,} resamples" if fit["resamples"] else "")
                             + (f"; {fit['method']}" if fit["method"] else "") + ")"
                             + (f" at ε = {_f(fit['epsilon'])}" if fit["epsilon"] is not None else "")
                             + (f". The theories' exponents: {theory}." if theory else "."))
                if not r["plot_png"]:  # the writer's PNG draws the privacy cost beside the curves
                    doc.figure(f"bandit_cost_{r['source']}.png", plots.privacy_cost_figure(r["privacy_cost"], fit),
                               f"{r['source']}: privacy cost at T against M (log-log) with the fitted power law and "
                               "the theories' exponents (grey, through the first point).")
        if f.bandit_attacks:
            doc.heading("Attacks on the released messages and schedule", level + 1)
            doc.para("Each row: an attacker fitted on simulated releases of both worlds of a pair guesses which world "
                     "produced a held-out release. Under the system's (ε, δ) claim no test can beat the ceiling "
                     "(e^ε + δ)/(1 + e^ε); an interval wholly above it contradicts the claim for that channel.")
            rows = f.bandit_attacks
            doc.table(["system", "claim ε, δ", "pair", "channel", "covered", "accuracy", "interval", "chance",
                       "ceiling", "reading", "source"],
                      [[a["system"], f"{_f(a['claim_epsilon'])}, {_f(a['claim_delta'])}", a["pair"],
                        a["channel"] + ("" if a["test_channel"] == a["channel"] else f" (via {a['test_channel']})"),
                        "yes" if a["covered"] else "no", _f(a["accuracy"]), _interval_text(a["interval"]),
                        _f(a["chance"]), _f(a["ceiling"]), _attack_reading(a), _role(a)] for a in rows],
                      numeric={5, 7, 8},
                      classes=[{9: "v-violated"} if a["above_ceiling"] else {} for a in rows])
        if audits:
            doc.heading("System audits of the bandit systems", level + 1)
            doc.para("The claimed ε, the ε an accountant computes and the ε the audit certifies, per channel "
                     "(pgc audit --system).")
            _system_audit_tables(doc, f, audits)


def _adversarial(doc: _Doc, f: Findings, anchor: str = "adversarial", level: int = 2) -> None:
    if not f.adversarial:
        return
    with doc.section("Adversarial aggregator", "What an aggregator that crafts the model θ it broadcasts can certify "
                     "about an agent's environment, per channel.", anchor, level=level):
        _adversarial_body(doc, f, anchor)


def _adversarial_body(doc: _Doc, f: Findings, anchor: str) -> None:
    doc.para("An aggregator that does not follow the protocol may choose the model θ it sends to the agents so that "
             "their submissions separate two environments ψ and ψ' as well as possible. Each row is one such audit: "
             "the θ found by the search, the bound certified at it per channel, and the bound without noise "
             "(what the clean channel would reveal).")
    rows, classes = [], []
    for adv in f.adversarial:
        for a in adv["audits"]:
            ev = a["evaluations"]
            rows.append([adv["source"], f"{_f(a['psi'])} vs {_f(a['psi_prime'])}", a["mechanism"], a["channel"],
                         _f(a["claimed_epsilon"]), _f(a["epsilon_lower_bound"]), _f(a["ratio"], 2), a["verdict"],
                         _f(a["noise_free_epsilon_lower_bound"]), a["objective"], "—" if ev is None else f"{ev:,}",
                         _f(a["wall_time_s"]), a["theta_file"] or "—"])
            classes.append({7: _vclass(a["verdict"])})
    if rows:
        doc.table(["source", "ψ vs ψ'", "mechanism", "channel", "claimed ε", "ε_LB", "ε_LB/ε", "verdict",
                   "noise-free ε_LB", "search objective", "evaluations", "search s", "θ file"], rows,
                  numeric={4, 5, 6, 8, 10, 11}, classes=classes)
    curve = [p for adv in f.adversarial for p in adv["curve"]]
    if curve:
        doc.figure("adversarial_curve.png" if anchor == "adversarial" else f"{anchor}_curve.png", plots.adversarial_curve_figure(curve),
                   "ε_LB/ε against Δψ = |ψ' − ψ| (log scale), one line per (model, channel, ε): honest aggregator "
                   "dashed, adversarial solid.")


def _attacks(doc: _Doc, f: Findings, anchor: str = "attacks", level: int = 2) -> None:
    if not f.attacks:
        return
    with doc.section("What an attacker learns: accuracy vs ε", "How often an attacker guesses an agent's environment "
                     "from its submissions, against chance and the ceiling the ε claim allows.", anchor, level=level):
        _attacks_body(doc, f, anchor, level)


def _attacks_body(doc: _Doc, f: Findings, anchor: str, level: int) -> None:
    doc.para("The honest-but-curious aggregator guesses each submitter's environment ψ. Chance is the best guess "
             "without data; the ε-LDP ceiling e^{kε}/(e^{kε}+|Ψ|−1) is the most any attacker can reach if the ε "
             "claim holds for k linked submissions. Accuracy above the ceiling (beyond its interval) means the claim "
             "is broken or an unprotected channel was used.")
    shown = best_attacks(f.attacks)
    defects = [a for a in f.attacks if a.attacker_defect]
    eps_values = sorted({a.epsilon for a in shown if a.epsilon is not None}, key=lambda e: (math.isinf(e), e))
    pivot: dict[tuple, dict] = {}
    for a in shown:
        target = a.setting.rsplit("/", 1)[-1][:40] if a.setting else a.source
        key = (target, a.channels, a.k or 1, a.candidates or "—", a.budget or "—")
        cell = pivot.setdefault(key, {})
        if a.epsilon not in cell or a.accuracy > cell[a.epsilon].accuracy:
            cell[a.epsilon] = a
    doc.para(f"Best attacker's accuracy (of {len(f.attacks)} attack rows; all rows with intervals are in report.json) "
             "per target, channel set and k; in brackets the ε-LDP ceiling; ‼ marks accuracy above the ceiling "
             "beyond its interval.")
    rows, classes = [], []
    for key, cell in list(pivot.items())[:40]:
        row = list(key)
        cls = {}
        for j, e in enumerate(eps_values):
            a = cell.get(e)
            if a is None:
                row.append("—")
                continue
            mark = "‼ " if a.above_ceiling else ""
            row.append(f"{mark}{a.accuracy:.3f} ({_f(a.ceiling, 3)})")
            if a.above_ceiling:
                cls[len(key) + j] = "v-violated"
        chance = next((a.chance for a in cell.values() if a.chance is not None), None)
        row.append(_f(chance, 3))
        rows.append(row)
        classes.append(cls)
    doc.table(["target", "channels", "k", "|Ψ|", "budget/ψ"] + [f"ε={fmt_eps(e)}" for e in eps_values] + ["chance"],
              rows, numeric=set(range(2, 6 + len(eps_values))), classes=classes)
    if any(a.epsilon is not None for a in shown):
        doc.figure("attack.png" if anchor == "attacks" else f"{anchor}_attack.png", plots.attack_figure(shown),
                   "Attack accuracy vs ε with 95% intervals, chance (dotted) and the ε-LDP ceiling (dashed).")
    if defects:
        doc.heading("Attacker defects (not privacy results)", level + 1, anchor=f"{anchor}-defects")
        doc.para("These rows' intervals lie entirely below chance. No sound attacker under a uniform prior does worse "
                 "than chance, so each row is flagged as an ATTACKER DEFECT (or sampling luck among many rows); it "
                 "says nothing about privacy and is left out of the table and plot above.")
        doc.table(["source", "target", "attacker", "channels", "k", "ε", "accuracy", "interval", "chance", "ceiling",
                   "flag"],
                  [[a.source, a.setting or "—", a.attacker, a.channels, a.k or 1, _f(a.epsilon), f"{a.accuracy:.3f}",
                    f"[{_f(a.ci_low)}, {_f(a.ci_high)}]", _f(a.chance), _f(a.ceiling), "attacker defect"]
                   for a in defects], numeric={4, 5, 6, 8, 9}, classes=[{10: "v-violated"} for _ in defects])


def _utility(doc: _Doc, c: ReportContent) -> None:
    if not c.utility and not c.replicate:
        return
    with doc.section("Utility: what the privacy costs", "How fast the private training learns to balance the pole, "
                     "beside the paper's numbers for the same setting.", "utility"):
        _utility_body(doc, c)


def _utility_body(doc: _Doc, c: ReportContent) -> None:
    if c.utility:
        doc.para("FST: first submission count at which the trailing 10-submission average score reaches 195 (eq. 26; "
                 "∞ when never). Success ratio: fraction of trials with FST within the run's horizon (eq. 27). Paper "
                 f"numbers are shown only for the paper's own settings; they were measured over {PAPER_HORIZON:,} "
                 "submissions and 20 trials, so a shorter run is expected to show fewer successes.")
        rows = []
        for u in c.utility:
            p = u.paper or {}
            rows.append([u.setting, u.trials, f"{u.horizon:,}", _f(u.fst_median, 5), _f(p.get("fst_median"), 6),
                         _f(u.success_ratio, 2), _f(p.get("success_ratio"), 2), _f(u.relative_auc, 3),
                         _f(p.get("relative_auc"), 3), _f(u.final_mu, 3), u.note])
        doc.table(["setting", "trials", "horizon", "median FST", "paper FST", "success ratio", "paper", "rel. AUC",
                   "paper", "final μ (median)", "note"], rows, numeric={1, 2, 3, 4, 5, 6, 7, 8, 9})
    if c.curves:
        doc.figure("learning_curves.png", plots.learning_curves_figure(c.curves),
                   "Average score μ per submission: thin lines are single trials, thick lines the median.")
    if c.success_curves:
        doc.figure("success_ratio.png", plots.success_ratio_figure(c.success_curves),
                   "Success ratio (eq. 27) against the number of submissions.")
    for rep in c.replicate:
        doc.heading(f"Replication of the paper ({rep['source']})", 3)
        if rep["rows"]:
            keys: list[str] = []
            for r in rep["rows"]:
                for k, v in r.items():
                    if k not in keys and not isinstance(v, (dict, list)):
                        keys.append(k)
            keys = keys[:12]
            doc.para("Each row: our number with its interval beside the paper's (paper numbers: 20 trials, 90,000 "
                     "submissions); a setting not better than its zero-information control is explainable as random "
                     "search in parameter space.") if "paper FST" in keys else None
            doc.table(keys, [[_cell(r.get(k)) for k in keys] for r in rep["rows"]])
        for text in rep["text"]:
            doc.para(text)
        for name, (caption, png) in rep.get("figures", {}).items():
            doc.figure(name, png, f"{rep['source']}: {caption}")
        for path, png in rep["images"][:6]:
            doc.figure(f"replicate_{path.name}", png, f"{rep['source']}: {path.name}")


def _cell(v) -> str:
    if isinstance(v, float):
        return fmt_eps(v, 4)
    if v is None:
        return "—"
    return str(v)


def tuning_points(study: schemas.TuneResult) -> tuple[list[dict], set[int]]:
    """The completed trials with a utility and a privacy value, and the Pareto front's trial numbers."""
    points = []
    for t in study.trials:
        if t.state != "COMPLETE" or t.utility is None or t.privacy is None:
            continue
        if math.isnan(t.utility) or math.isnan(t.privacy):
            continue
        points.append({"number": t.number, "utility": t.utility, "privacy": t.privacy,
                       "mechanism": str(t.params.get("mechanism", "?")), "trial": t})
    return points, set(study.pareto_front)


def _tuning(doc: _Doc, c: ReportContent) -> None:
    if not c.tuning:
        return
    with doc.section("Tuning: the utility–privacy frontier", "The hyperparameter trials of each tuning study and the "
                     "ones no other trial beats on both utility and privacy.", "tuning"):
        _tuning_body(doc, c)


def _tuning_body(doc: _Doc, c: ReportContent) -> None:
    for entry in c.tuning:
        study: schemas.TuneResult = entry["study"]
        ev = study.evaluation
        counts = study.counts
        doc.para(f"Study '{study.study}' ({study.mode} mode, sampler {study.sampler or '?'}, "
                 f"seed {study.seed if study.seed is not None else '?'}): {counts.get('COMPLETE', 0)} complete, "
                 f"{counts.get('PRUNED', 0)} pruned, {counts.get('FAIL', 0)} failed trials. Each trial trains "
                 f"{ev.get('runs_per_trial', '?')} runs of {_f(ev.get('submissions'))} submissions on ψ ∈ "
                 f"{ev.get('gravities', '?')} ({ev.get('environments', 'shadow/public')} environments). "
                 f"Utility = {study.utility or '?'}, privacy = {study.privacy or '?'}.")
        points, front = tuning_points(study)
        if points:
            cons = (study.constraint or {}).get("min")
            pruned = [{"privacy": t.privacy, "utility": t.utility or 0.0} for t in study.trials
                      if t.state == "PRUNED" and t.privacy is not None and math.isfinite(t.privacy)]
            doc.figure(f"pareto_{entry['source']}.png",
                       plots.pareto_figure(points, front, str(study.utility), str(study.privacy), cons, pruned=pruned),
                       "Every completed trial (dots), pruned trials at their intermediate utility (grey ×), and the "
                       "Pareto front (no other trial is both more useful and more private) joined.")
        front_pts = sorted((p for p in points if p["number"] in front), key=lambda p: p["privacy"])
        if front_pts:
            rows = []
            for p in front_pts:
                t = p["trial"]
                prm = t.params
                rows.append([f"#{p['number']}", prm.get("mechanism"), _f(prm.get("epsilon")), _f(prm.get("clip")),
                             prm.get("buffer_size"), prm.get("reduced_dim", "—"), _f(prm.get("learning_rate")),
                             _f(p["privacy"]), _f(t.success_ratio, 2), _f(t.median_fst, 5), _f(t.final_mu, 3)])
            doc.table(["trial", "mechanism", "ε", "C", "|B|", "d̂", "η", str(study.privacy), "success ratio",
                       "median FST", "final μ"], rows, numeric={2, 3, 4, 5, 6, 7, 8, 9, 10})
        best = study.best_constrained
        if study.mode == "constrained":
            if best:
                doc.para(f"Constrained result: the smallest {study.privacy} whose {study.utility} ≥ "
                         f"{(study.constraint or {}).get('min')} is {_f(best.get('privacy'))} "
                         f"(trial #{best.get('number')}, params {best.get('params')}).")
            else:
                doc.para("Constrained result: no trial met the utility constraint.")
        doc.para("Tuning on private environments spends privacy itself (each trial is another release about them); "
                 "this study used " + str(ev.get("environments", "shadow/public")) + " ψ values.")


def _references(doc: _Doc, c: ReportContent) -> dict | None:
    """The committed reference results: their own verdict, warnings, summary and details, apart from the run's."""
    f = c.reference
    if not f:
        return None
    verdict = overall_verdict(f)
    labels = ", ".join(s.label for s in c.sources if s.reference)
    with doc.section(f"References: committed results ({sum(1 for s in c.sources if s.reference)})",
                     "Results committed with this checkout (other configurations and ε), shown for comparison; their "
                     "verdict and warnings are theirs, not this run's.", "references", cls="reference"):
        doc.para(f"Reference verdict (these results only): {verdict}")
        doc.para(f"Inputs: {labels}.", cls="sub")
        if f.bandit_regret or f.bandit_attacks or any(is_bandit_audit(h) for h in f.system_audits):
            doc.para("Their federated-bandit results are shown in the Federated linear bandits section, marked "
                     "reference.", cls="sub")
        rows = _summary_table(doc, f, limit=40)
        _warnings(doc, f, anchor="ref-warnings", level=3)
        _bounds(doc, f, anchor="ref-bounds", level=3)
        _system_audits(doc, f, anchor="ref-system-audits", level=3)
        _adversarial(doc, f, anchor="ref-adversarial", level=3)
        _attacks(doc, f, anchor="ref-attacks", level=3)
    return {"verdict": verdict, "summary": rows}


def _findings_json(f: Findings) -> dict:
    return {"family": f.family, "warnings": f.warnings, "summary": summary_rows(f)}


def render(c: ReportContent, out_dir: Path, title: str = "pgc-audit privacy report") -> tuple[str, str, dict, dict]:
    """Return (html, markdown, json summary, figures {name: png bytes})."""
    doc = _Doc(out_dir)
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    verdict = overall_verdict(c.own)
    doc.raw_html(f"<h1>{_esc(title)}</h1><div class='sub'>generated {now} from {len(c.sources)} input(s)</div>")
    doc.md.append(f"# {_md(title)}\n\n*generated {now} from {len(c.sources)} input(s)*\n")
    _first_screen(doc, c, verdict)
    _warnings(doc, c.own)
    _protection(doc, c)
    _bounds(doc, c.own)
    _system_audits(doc, c.own)
    _adversarial(doc, c.own)
    _attacks(doc, c.own)
    _bandit(doc, c)
    _utility(doc, c)
    _mitigation_costs(doc, c)
    _tuning(doc, c)
    ref = _references(doc, c)
    with doc.section("Inputs", "The result files this report was built from, with their kind and whether they are "
                     "the run's own or a committed reference.", "inputs"):
        doc.table(["kind", "label", "role", "file"],
                  [[s.kind, s.label, "reference" if s.reference else "this run", str(s.path)] for s in c.sources])
    page = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body><main>"
            + "\n".join(doc.html) + "</main></body></html>\n")
    markdown = "\n".join(doc.md)
    summary = {
        "format": FORMAT, "generated": now, "verdict": verdict,
        "inputs": [{"kind": s.kind, "label": s.label, "path": str(s.path), "reference": s.reference}
                   for s in c.sources],
        "warnings": c.own.warnings,
        "family": c.own.family,
        "summary": summary_rows(c.own),
        "bounds": [{**asdict(b), "budget_limited": b.budget_limited} for b in c.bounds],
        "attacks": [{**asdict(a), "above_ceiling": a.above_ceiling, "uses_side_channel": a.uses_side_channel,
                     "attacker_defect": a.attacker_defect} for a in c.attacks],
        "adversarial": c.own.adversarial + c.reference.adversarial,
        "system_audits": c.own.system_audits + c.reference.system_audits,
        "bandit_attacks": c.own.bandit_attacks + c.reference.bandit_attacks,
        "references": None if ref is None else {"verdict": ref["verdict"], **_findings_json(c.reference)},
        "protection": c.protection,
        "utility": [asdict(u) for u in c.utility],
        "mitigation_costs": c.mitigation_costs,
        "tuning": [{"source": t["source"], "pareto_front": t["study"].pareto_front,
                    "best_constrained": t["study"].best_constrained, "counts": t["study"].counts}
                   for t in c.tuning],
        "figures": sorted(doc.figures),
    }
    return page, markdown, schemas.dump("report", summary), doc.figures
