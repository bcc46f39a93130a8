"""``pgc bench catalogue``: the DP-testing catalogue (DP-Sniper's 20 algorithms, :mod:`pgc.catalogue`) audited by
``audit_system`` beside DP-Sniper's method (:mod:`audit.dp_sniper`), at the same total of releases per side.

Per cell (algorithm, seed), each tool spends ``--total`` releases per side, training included:

* ours, over the pairs: every DP-Sniper input pair audited on ``total / P`` releases per side (P pairs; the
  certification share is the largest n with n + the System audit's training split — a quarter of n, at least
  1,000: :data:`audit.tester.SYSTEM_SPLIT` — ≤ that), each certified at confidence
  1 − α/P (Bonferroni), the largest ε_LB kept, its p-value P·min p; this is the row that flags and enters Holm;
* ours, first pair: DP-Sniper's first pair alone on the whole ``total`` (same rule);
* DP-Sniper: DD-Search over the P pairs with its stage sizes scaled to ``total`` (:func:`audit.dp_sniper.
  scaled_config`), at the same confidence.

An algorithm is flagged when ε_LB exceeds its claimed ε. Holm's step-down (statsmodels ``multipletests``) runs
per seed over the catalogue on our p-values. The result is written after every cell (atomically: a temporary file,
then a rename); ``--resume`` keeps the finished cells of an earlier ``--out`` with the same settings. A Markdown
table is written beside it. Releases holding NaN are audited as far as the audit accepts them: a cell whose
audit refuses them records the refusal instead of a bound.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.options import add_confidence, add_out, non_negative_int, positive_int

help = "DP-Sniper's catalogue of 20 DP algorithms: our certified ε_LB beside DP-Sniper's, at equal releases"

TOTAL = 100_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algorithms", nargs="+", default=None, help="only these algorithms (default: all 20)")
    p.add_argument("--total", type=positive_int, default=TOTAL,
                   help=f"releases per side per algorithm and tool, training included (default {TOTAL:,})")
    p.add_argument("--seeds", type=non_negative_int, nargs="+", default=[0, 1, 2])
    add_confidence(p, default=0.95)
    add_out(p, default="runs/bench/catalogue.json", help="JSON result (a .md table beside it)")
    p.add_argument("--resume", action="store_true", help="keep the finished cells of an earlier --out")


def cell_seed(seed: int, algorithm: str) -> np.random.SeedSequence:
    """One cell's seed sequence, fixed by the run's seed and the algorithm alone."""
    return np.random.SeedSequence([seed, zlib.crc32(algorithm.encode())])


def certification_size(total: int, train_fraction: float, minimum: int) -> int:
    """The largest certification size n with n + the audit's training split (max(minimum, ⌊fraction·n⌋)) ≤ total."""
    n = int(total / (1.0 + train_fraction))
    while n > 0 and n + max(minimum, int(train_fraction * n)) > total:
        n -= 1
    if n < 100:
        raise UserError(f"--total {total} leaves fewer than 100 certification releases per side")
    return n


def _audit(system, pair: tuple, total: int, confidence: float, seed: int) -> dict:
    """audit_system on one pair within ``total`` releases per side: ε_LB, verdict, statistic, p-value, wall."""
    from audit.system_audit import AuditSettings, audit_system
    from audit.tester import SYSTEM_SPLIT
    from pgc.catalogue import CHANNEL

    samples = certification_size(total, SYSTEM_SPLIT.fraction, SYSTEM_SPLIT.minimum)
    settings = AuditSettings(samples=samples, seed=seed, confidence=confidence, train_fraction=SYSTEM_SPLIT.fraction,
                             train_minimum=SYSTEM_SPLIT.minimum)
    start = time.perf_counter()
    try:
        result = audit_system(system, pair[0], pair[1], settings, channels=[CHANNEL])
    except UserError as exc:
        return {"status": f"not audited: {exc}", "epsilon_lower_bound": None, "p_value": None,
                "wall_s": time.perf_counter() - start}
    row = result.rows[0]
    return {"status": "audited", "epsilon_lower_bound": float(row.epsilon_lower_bound), "verdict": result.verdict,
            "statistic": row.statistic, "p_value": float(row.p_value), "samples_per_side": samples,
            "train_per_side": settings.train_samples, "wall_s": time.perf_counter() - start}


def ours_over_pairs(system, pairs: dict, total: int, confidence: float, seq: np.random.SeedSequence) -> dict:
    """Every pair on total/P releases per side at confidence 1 − α/P: the largest ε_LB, P·min p."""
    start, share = time.perf_counter(), total // len(pairs)
    each = 1.0 - (1.0 - confidence) / len(pairs)
    seeds = [int(s.generate_state(1)[0]) for s in seq.spawn(len(pairs))]
    per_pair = {name: _audit(system, pair, share, each, s) for (name, pair), s in zip(pairs.items(), seeds,
                                                                                        strict=True)}
    audited = {k: v for k, v in per_pair.items() if v["status"] == "audited"}
    out = {"pairs": len(pairs), "per_pair_total": share, "per_pair_confidence": each,
           "per_pair": {k: {f: v.get(f) for f in ("epsilon_lower_bound", "statistic", "p_value", "status")}
                        for k, v in per_pair.items()},
           "wall_s": time.perf_counter() - start}
    if not audited:
        return {**out, "status": next(iter(per_pair.values()))["status"], "epsilon_lower_bound": None,
                "p_value": None}
    best = max(audited, key=lambda k: audited[k]["epsilon_lower_bound"])
    p_value = min(1.0, len(pairs) * min(v["p_value"] for v in audited.values()))
    return {**out, "status": "audited" if len(audited) == len(pairs) else "partly audited",
            "epsilon_lower_bound": audited[best]["epsilon_lower_bound"], "pair": best,
            "statistic": audited[best]["statistic"], "p_value": p_value}


def dpsniper_cell(system, pairs: dict, total: int, confidence: float, seq: np.random.SeedSequence) -> dict:
    """DP-Sniper's DD-Search over the pairs with its stages scaled to ``total`` releases per side."""
    from audit.dp_sniper import dd_search, pair_draw, scaled_config, torch_like_init
    from pgc.catalogue import CHANNEL

    config = scaled_config(total, len(pairs), confidence=confidence)
    rng = np.random.Generator(np.random.PCG64(seq))
    draw = pair_draw(pairs, lambda secret, n: system.to_dpsniper(system.release(secret, n, rng)[CHANNEL]))
    start = time.perf_counter()
    result = dd_search(list(pairs), draw, config, torch_like_init(rng), system.dpsniper_flags)
    return {"epsilon_lower_bound": float(result.epsilon_lower_bound), "epsilon": float(result.epsilon),
            "pair": result.pair, "releases_per_side": config.releases_per_side(len(pairs)),
            "stages": {k: getattr(config, k) for k in ("n_train", "n", "n_check", "n_final")},
            "wall_s": time.perf_counter() - start}


def audit_cell(name: str, total: int, confidence: float, seed: int) -> dict:
    """One cell: ours over the pairs and on the first pair, DP-Sniper over the pairs."""
    from pgc.catalogue import catalogue_system

    system = catalogue_system(name)
    pairs = system.canaries()
    first_seq, pairs_seq, sniper_seq = cell_seed(seed, name).spawn(3)
    first = next(iter(pairs.items()))
    ours_first = _audit(system, first[1], total, confidence, int(first_seq.generate_state(1)[0]))
    return {"algorithm": name, "seed": seed, "broken": system.broken, "claimed_epsilon": float(system.claim.epsilon),
            "pairs": len(pairs), "first_pair": first[0],
            "ours": ours_over_pairs(system, pairs, total, confidence, pairs_seq), "ours_first_pair": ours_first,
            "dpsniper": dpsniper_cell(system, pairs, total, confidence, sniper_seq)}


def flagged(bound: float | None, claimed: float) -> bool | None:
    """ε_LB above the claim (None: no bound)."""
    return None if bound is None else bool(bound > claimed * (1 + 1e-12))


def holm_per_seed(cells: list[dict], confidence: float) -> dict[tuple[str, int], bool]:
    """Per seed, Holm's step-down over the catalogue on our p-values: which cells stay rejected."""
    from statsmodels.stats.multitest import multipletests

    rejected = {}
    for seed in sorted({c["seed"] for c in cells}):
        group = [c for c in cells if c["seed"] == seed and c["ours"]["p_value"] is not None]
        if group:
            keep = multipletests([min(1.0, max(0.0, c["ours"]["p_value"])) for c in group], alpha=1.0 - confidence,
                                 method="holm")[0]
            rejected.update({(c["algorithm"], seed): bool(r) for c, r in zip(group, keep, strict=True)})
    return rejected


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(statistics.median(values)) if values else None


def per_algorithm(cells: list[dict], rejected: dict) -> list[dict]:
    """Per algorithm: the median over seeds of each tool's ε_LB, flags by that median, Holm per seed."""
    rows = []
    for name in dict.fromkeys(c["algorithm"] for c in cells):
        group = [c for c in cells if c["algorithm"] == name]
        claimed = group[0]["claimed_epsilon"]
        ours = _median([c["ours"]["epsilon_lower_bound"] for c in group])
        first = _median([c["ours_first_pair"]["epsilon_lower_bound"] for c in group])
        sniper = _median([c["dpsniper"]["epsilon_lower_bound"] for c in group])
        rows.append({"algorithm": name, "broken": group[0]["broken"], "claimed_epsilon": claimed,
                     "seeds": [c["seed"] for c in group], "ours_median": ours, "ours_first_pair_median": first,
                     "dpsniper_median": sniper, "ours_flags": flagged(ours, claimed),
                     "dpsniper_flags": flagged(sniper, claimed),
                     "ours_holm_rejected": [rejected.get((name, c["seed"])) for c in group],
                     "ours_statistics": sorted({str(c["ours"].get("statistic")) for c in group}),
                     "ours_status": sorted({c["ours"]["status"] for c in group}),
                     "ours_wall_s": sum(c["ours"]["wall_s"] + c["ours_first_pair"]["wall_s"] for c in group),
                     "dpsniper_wall_s": sum(c["dpsniper"]["wall_s"] for c in group)})
    return rows


def summary(cells: list[dict], confidence: float) -> dict:
    rejected = holm_per_seed(cells, confidence)
    rows = per_algorithm(cells, rejected)
    broken, correct = [r for r in rows if r["broken"]], [r for r in rows if not r["broken"]]
    seeds = sorted({c["seed"] for c in cells})

    def count(group, key):
        return sum(r[key] is True for r in group)

    def holm_count(group, seed):
        return sum(rejected.get((r["algorithm"], seed)) is True for r in group)

    return {"algorithms": rows, "broken": len(broken), "correct": len(correct), "alpha": 1.0 - confidence,
            "broken_flagged": {"ours": count(broken, "ours_flags"), "dpsniper": count(broken, "dpsniper_flags")},
            "false_alarms": {"ours": count(correct, "ours_flags"), "dpsniper": count(correct, "dpsniper_flags")},
            "ours_holm_per_seed": {str(s): {"broken_flagged": holm_count(broken, s),
                                            "false_alarms": holm_count(correct, s)} for s in seeds},
            "ours_not_audited": [r["algorithm"] for r in rows if r["ours_median"] is None]}


def _fmt(value: float | None) -> str:
    return "—" if value is None else ("∞" if math.isinf(value) else f"{value:.3f}")


def write_table(path: Path, result: dict) -> None:
    """The Markdown table: per algorithm, claim, both tools' median ε_LB and flags."""
    from reports.files import write_text_atomic

    s, st = result["summary"], result["settings"]
    lines = [f"# `pgc bench catalogue`: {st['total']:,} releases per side per tool, seeds {st['seeds']}, "
             f"confidence {st['confidence']}", "", f"Command: `{result['command']}`", "",
             *([] if result["complete"] else [f"Partial: {len(result['cells'])} cells finished; `--resume` goes on.",
                                              ""]),
             "| algorithm | broken | claimed ε | ours ε_LB (pairs) | ours ε_LB (first pair) | DP-Sniper ε_LB | "
             "ours flags | DP-Sniper flags | ours Holm per seed | our statistics | wall s (ours / DP-Sniper) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in s["algorithms"]:
        holm = " ".join("—" if h is None else ("✔" if h else "·") for h in r["ours_holm_rejected"])
        lines.append(f"| {r['algorithm']} | {'yes' if r['broken'] else 'no'} | {r['claimed_epsilon']:.3f} | "
                     f"{_fmt(r['ours_median'])} | {_fmt(r['ours_first_pair_median'])} | {_fmt(r['dpsniper_median'])} "
                     f"| {r['ours_flags']} | {r['dpsniper_flags']} | {holm} | {', '.join(r['ours_statistics'])} | "
                     f"{r['ours_wall_s']:.0f} / {r['dpsniper_wall_s']:.0f} |")
    lines += ["", "ε_LB: the median over seeds. " + summary_lines(result).replace("\n", "  \n")]
    write_text_atomic(path, "\n".join(lines) + "\n")


def summary_lines(result: dict) -> str:
    s = result["summary"]
    per_seed = ", ".join(f"seed {k}: {v['broken_flagged']}/{s['broken']} broken, {v['false_alarms']}/{s['correct']} "
                         f"correct" for k, v in s["ours_holm_per_seed"].items())
    medians = "; ".join(f"{r['algorithm']} {_fmt(r['ours_median'])} vs {_fmt(r['dpsniper_median'])}"
                        for r in s["algorithms"])
    return (f"broken flagged: ours {s['broken_flagged']['ours']}/{s['broken']}, DP-Sniper "
            f"{s['broken_flagged']['dpsniper']}/{s['broken']}\n"
            f"false alarms: ours {s['false_alarms']['ours']}/{s['correct']}, DP-Sniper "
            f"{s['false_alarms']['dpsniper']}/{s['correct']}\n"
            f"ours after Holm over the catalogue: {per_seed}\n"
            f"not audited by ours (releases refused): {', '.join(s['ours_not_audited']) or 'none'}\n"
            f"median-of-seeds ε_LB (ours vs DP-Sniper): {medians}")


def _previous(path: Path, settings: dict) -> dict:
    """Finished cells of an earlier run with the same settings, by (algorithm, seed)."""
    from reports.files import read_json

    if not path.is_file():
        return {}
    old = read_json(path)
    same = ("total", "confidence")
    if {k: (old.get("settings") or {}).get(k) for k in same} != {k: settings[k] for k in same}:
        raise UserError(f"--resume: {path} was written with other settings ({old.get('settings')})")
    return {(c["algorithm"], c["seed"]): c for c in old.get("cells", [])}


def _write(path: Path, result: dict) -> None:
    import pgc.schemas as schemas
    from reports.files import write_json_atomic

    write_json_atomic(path, schemas.dump("bench", result))


def run(args: argparse.Namespace) -> int:
    from pgc.catalogue import BY_NAME, CATALOGUE

    names = [a.name for a in CATALOGUE] if args.algorithms is None else list(dict.fromkeys(args.algorithms))
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise UserError(f"unknown algorithm(s) {', '.join(unknown)}; the catalogue: {', '.join(BY_NAME)}")
    out = Path(args.out)
    settings = {"total": args.total, "confidence": args.confidence, "seeds": list(args.seeds)}
    done = _previous(out, settings) if args.resume else {}
    result = {"bench": "catalogue", "settings": settings, "command": "pgc " + " ".join(sys.argv[1:]), "cells": [],
              "complete": False}
    todo = [(name, seed) for seed in args.seeds for name in names]  # a whole catalogue per seed first
    for i, (name, seed) in enumerate(todo, 1):
        cell = done.get((name, seed)) or audit_cell(name, args.total, args.confidence, seed)
        result["cells"].append(cell)
        o, d = cell["ours"], cell["dpsniper"]
        print(f"[{i}/{len(todo)}] {name} seed {seed}: ours {_fmt(o['epsilon_lower_bound'])} [{o['status']}], "
              f"first pair {_fmt(cell['ours_first_pair']['epsilon_lower_bound'])}, DP-Sniper "
              f"{_fmt(d['epsilon_lower_bound'])}; claimed {cell['claimed_epsilon']:.3f}", file=sys.stderr, flush=True)
        result["summary"] = summary(result["cells"], args.confidence)
        _write(out, result)
        write_table(out.with_suffix(".md"), result)
    result["complete"] = True
    _write(out, result)
    write_table(out.with_suffix(".md"), result)
    print(summary_lines(result))
    print(f"wrote {out}, {out.with_suffix('.md')}")
    return 0
