"""How many of SVT6's ten answers the strongest prefix takes (``audit.statistics.strongest_prefix``) on fit halves of
the bench's size (10,500 releases per side at "X shape"), and how many ``audit.statistics.vote_width`` counts. Run
from the repository root:

    .venv/bin/python results/catalogue/vote-width/prefix_widths.py [FITS]
"""

import collections
import sys

import numpy as np

from audit.statistics import ColumnSummary, strongest_prefix, two_valued, vote_width
from pgc.catalogue import CHANNEL, catalogue_system


def main() -> None:
    fits = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    system = catalogue_system("SVT6")
    first, second = system.canaries()["X shape"]
    prefix, width = collections.Counter(), collections.Counter()
    for seed in range(fits):
        rng = np.random.default_rng(seed)
        pos, neg = (system.release(x, 10_500, rng)[CHANNEL] for x in (first, second))
        summary = ColumnSummary.of(pos, neg)
        cols = summary.order[summary.diff[summary.order] != 0]
        abs_z = np.abs(summary.z[cols[two_valued(pos, neg)[cols]]])
        prefix[strongest_prefix(abs_z)] += 1
        width[vote_width(abs_z)] += 1
    print(f"SVT6 at 'X shape', {fits} fits of 10,500 releases per side: columns counted (of 10), how many fits")
    print("strongest prefix:", ", ".join(f"{m}: {prefix[m]}" for m in sorted(prefix)))
    print("vote width:      ", ", ".join(f"{m}: {width[m]}" for m in sorted(width)))


if __name__ == "__main__":
    main()
