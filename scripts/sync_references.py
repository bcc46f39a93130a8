"""Copy the committed reference results that ship with the package (``pgc.references.SHIPPED``) from
``results/`` into ``pgc/references/``. Run from the repository root after regenerating any of them:
``python scripts/sync_references.py`` (``--check``: exit 1 naming every file that differs)."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pgc.references import SHIPPED  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    differ = []
    for relative in SHIPPED:
        src, dst = ROOT / "results" / relative, ROOT / "pgc" / "references" / relative
        if dst.is_file() and dst.read_bytes() == src.read_bytes():
            continue
        differ.append(relative)
        if not args.check:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    for relative in differ:
        print(("differs: " if args.check else "copied: ") + relative)
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    sys.exit(main())
