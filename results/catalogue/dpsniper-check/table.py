"""The Markdown table of check.py's JSON: python table.py dpsniper-check.json > dpsniper-check.md"""

import json
import sys

result = json.load(open(sys.argv[1]))
s = result["settings"]
print("# DP-Sniper's own code beside `audit.dp_sniper` on the same outputs\n")
print(
    f"Per pair: n_train = n = n_check = {s['n_train']:,}; final n = {s['n_final']:,} per side; confidence "
    f"{s['confidence']}; c = 0.01; one output stream per (pair, side) from seed {s['seed']}; the same initial "
    f"weights per pair (torch {s['torch']}, numpy {s['numpy']}).\n"
)
print(
    "| algorithm | broken | DP-Sniper ε_LB | ours ε_LB | DP-Sniper pair | ours pair | within 10 % | "
    "largest per-pair ε gap | DP-Sniper s | ours s |"
)
print("|---|---|---|---|---|---|---|---|---|---|")
for r in result["rows"]:
    t, o = r["dpsniper"], r["ours"]
    gap = max(abs(t["per_pair"][k] - o["per_pair"][k]) for k in t["per_pair"])
    within = "n/a (≤ 0)" if r["within_10_percent"] is None else ("yes" if r["within_10_percent"] else "NO")
    print(
        f"| {r['algorithm']} | {'yes' if r['broken'] else 'no'} | {t['epsilon_lower_bound']:.4f} | "
        f"{o['epsilon_lower_bound']:.4f} | {t['pair']} | {o['pair']} | {within} | {gap:.2g} | "
        f"{r['dpsniper_s']:.0f} | {r['ours_s']:.0f} |"
    )
rows = [r for r in result["rows"] if r["within_10_percent"] is not None]
print(f"\nWithin 10 % where DP-Sniper certifies > 0: {sum(r['within_10_percent'] for r in rows)} of {len(rows)}.")
