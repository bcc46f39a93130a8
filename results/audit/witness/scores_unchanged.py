"""Whether every fitted score is the same to the last bit in this checkout as at commit BASE: ``score_dump.py`` run
against a worktree of BASE and against this checkout, its arrays compared with ``numpy.array_equal`` (NaN equal to
NaN). Usage, from the repository root (about 6 s):

    python results/audit/witness/scores_unchanged.py f3f6f24 > results/audit/witness/scores-unchanged.txt
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def dump(tree: Path, out: Path) -> str:
    """``score_dump.py`` with ``tree``'s code first on the path; what it printed."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(HERE / "score_dump.py"), str(out)], cwd=tree, env=env, check=True, capture_output=True
    )
    return done.stdout.decode().strip()


def main() -> int:
    base = sys.argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), base], check=True, capture_output=True
        )
        try:
            said = [dump(tree, Path(scratch) / "base.npz"), dump(ROOT, Path(scratch) / "now.npz")]
            old, new = np.load(Path(scratch) / "base.npz"), np.load(Path(scratch) / "now.npz")
            keys = sorted(k for k in old.files if not k.endswith("|fitted"))
            differ = [k for k in keys if k not in new.files or not np.array_equal(old[k], new[k], equal_nan=True)]
            fitted = sum(bool(old[k + "|fitted"]) for k in keys)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    print(f"base {base}: {said[0].replace(scratch, '<worktree>')}")
    print(f"this checkout: {said[1].replace(str(ROOT), '.')}")
    print(f"{len(keys)} statistic × shape cells, {fitted} fitted; scores differing from {base}: {len(differ)}")
    for k in differ:
        print("  differs:", k)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
