"""Whether two result files hold the same numbers, their timings (keys ending in ``wall_time_s`` or ``wall_s``) and
``command`` aside: prints every other leaf that differs, then a count. Run from the repository root:

    .venv/bin/python results/catalogue/vote-width/same_numbers.py FIRST.json SECOND.json
"""

import json
import sys

IGNORED = ("wall_time_s", "wall_s", "command")


def leaves(value, path: str = ""):
    if isinstance(value, dict):
        for key, item in value.items():
            if not key.endswith(IGNORED):
                yield from leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def main() -> None:
    first, second = (dict(leaves(json.load(open(p)))) for p in sys.argv[1:3])
    differ = sorted(k for k in first.keys() | second.keys() if first.get(k, "absent") != second.get(k, "absent"))
    for key in differ:
        print(f"{key}: {first.get(key, 'absent')!r} → {second.get(key, 'absent')!r}")
    print(f"{len(first)} numbers and labels in the first, {len(second)} in the second, {len(differ)} differ")


if __name__ == "__main__":
    main()
