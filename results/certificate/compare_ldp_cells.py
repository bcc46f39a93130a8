"""Compare the cells a ``pgc bench ldp`` log printed with a committed bench.json: how many certify higher, the same
and lower at the log's three decimals, and each lower one. Usage, from the repository root:

    python results/certificate/compare_ldp_cells.py LOG [BENCH_JSON]
"""

import json
import re
import sys

CELL = re.compile(r"\[\d+/\d+\] (\S+):(\S+) k=(\d+) ε=(\S+) n=\S+: ours (\S+) \[(\S+)\]")


def main() -> None:
    committed = json.load(open(sys.argv[2] if len(sys.argv) > 2 else "results/ldp/bench.json"))["cells"]
    before = {(c["library"], c["protocol"], c["k"], c["epsilon"]): c["epsilon_lower_bound"] for c in committed}
    rows = []
    for line in open(sys.argv[1], encoding="utf-8"):
        m = CELL.match(line)
        if m and (m[1], m[2], int(m[3]), float(m[4])) in before:
            key = (m[1], m[2], int(m[3]), float(m[4]))
            rows.append((key, round(before[key], 3), float(m[5]), before[key]))
    higher = sum(now > old for _, old, now, _ in rows)
    equal = sum(now == old for _, old, now, _ in rows)
    lower = [(key, exact, now) for key, old, now, exact in rows if now < old]
    print(f"{len(rows)} cells at 3 decimals: {higher} higher, {equal} equal, {len(lower)} lower")
    for key, exact, now in lower:
        print(f"  lower {key}: {exact:.4f} -> {now:.3f} ({(now - exact) / exact:+.2%})")


if __name__ == "__main__":
    main()
