"""Writes pgc/dprl/found_pairs.py from the worst-pair searches committed in results/thesis/ (run from the repository
root after results/thesis/run.sh): each system's canaries() then names the pairs the auditor found."""

from __future__ import annotations

import json
import pprint
from pathlib import Path

SEARCHES = {  # system module -> the committed search results whose pairs it names
    "advising": ["advising-searched"],
    "planning": ["planning-histogram-searched", "planning-searched"],
    "dpdrl": ["dpdrl-searched", "dpdrl-resample-searched"],
    "oneparam": ["oneparam-searched", "oneparam-member-searched"],
}


def _secret_lines(secret, end: str) -> list[str]:
    """``secret`` as source lines indented 12 spaces and followed by ``end``, no line over 120 columns."""
    text = pprint.pformat(secret, width=120 - 12 - len(end), compact=True, sort_dicts=False) + end
    return ["            " + line for line in text.splitlines()]


def main() -> None:
    found = {}
    for module, names in SEARCHES.items():
        for name in names:
            data = json.loads(Path(f"results/thesis/{name}.json").read_text())
            pair = data["searched_pair"]
            found.setdefault(module, {})[f"found by the search ({name}.json)"] = (pair["secret"], pair["secret_prime"])
    lines = [
        '"""The worst neighbouring pairs the auditor\'s search found (results/thesis/*-searched.json), written by',
        "scripts/found_pairs.py; each system names them in canaries(). Each secret wrapped at 120 columns: data, "
        'not code."""',
        "",
        "FOUND_PAIRS = {",
    ]
    for module in sorted(found):
        lines.append(f"    {module!r}: {{")
        for name, (secret, secret_prime) in sorted(found[module].items()):
            lines += [f"        {name!r}: (", *_secret_lines(secret, ","), *_secret_lines(secret_prime, "),")]
        lines.append("    },")
    lines.append("}")
    Path("pgc/dprl/found_pairs.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
