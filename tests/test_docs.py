"""The docs stay true of any checkout: no absolute path of one machine, no temporary run folder, no "this
machine" (a measurement names the machine it ran on), and every repository path a doc links to exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]

MACHINE_BOUND = [
    (re.compile(r"(?<![\w.])/(?:work|root|home|Users)/\w"), "an absolute path of one machine"),
    (re.compile(r"(?<![\w.])/tmp/\w"), "a temporary folder"),
    (re.compile(r"pgc-\d{2,}-"), "a command's temporary output folder (a real process id)"),
    (re.compile(r"\bthis machine\b", re.I), '"this machine" (name the machine a measurement ran on)'),
]


def test_docs_name_no_machine_bound_path_or_this_machine():
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            found += [
                f"{doc.relative_to(ROOT)}:{number}: {why}: {line.strip()[:100]}"
                for pattern, why in MACHINE_BOUND
                if pattern.search(line)
            ]
    assert not found, "\n".join(found)


def test_every_linked_repository_path_exists():
    missing = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} links to {target}")
    assert not missing, "\n".join(missing)


# --- names the docs give in code spans are the code's --------------------------------------------------

PACKAGES = ("audit", "attacks", "pgc", "reports")
# paths the docs give as a user's choice, not as a file of this repository
PLACEHOLDER_PATHS = {"pgc/mysys/"}
# options of other programs the docs quote (Chromium's, for the report's browser test)
FOREIGN_OPTIONS = {"--user-data-dir"}


# a changelog names what earlier versions held: the checks of current names read the other docs
CURRENT_DOCS = [doc for doc in DOCS if doc.name != "CHANGELOG.md"]


def _inline_spans(text: str) -> list[str]:
    """The inline code spans outside fenced blocks (a span may wrap a line: its spaces joined)."""
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]


def _code_spans(text: str) -> list[str]:
    """Inline code spans and fenced blocks' lines (continuation lines joined)."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    return _inline_spans(text) + [line for b in blocks for line in b.replace("\\\n", " ").splitlines()]


def test_every_repository_path_in_code_spans_exists():
    roots = "|".join(
        ("audit", "attacks", "pgc", "reports", "tests", "scripts", "results", "examples", "configs", "docs")
    )
    missing = []
    for doc in CURRENT_DOCS:
        for span in _inline_spans(doc.read_text(encoding="utf-8")):
            m = re.fullmatch(rf"((?:{roots})/[\w./-]*?)(?:(?:::|:)\w+)?", span)
            if (
                m
                and not re.search(r"[*<{]", span)
                and m.group(1) not in PLACEHOLDER_PATHS
                and not (ROOT / m.group(1)).exists()
            ):
                missing.append(f"{doc.relative_to(ROOT)}: `{span}`")
    assert not missing, "\n".join(missing)


def test_every_dotted_name_in_code_spans_is_importable():
    """`audit.verdicts.decide`, `pgc.contracts.Mechanism`, ...: a module, or an attribute of one."""
    import importlib

    wrong = []
    for doc in CURRENT_DOCS:
        spans = _inline_spans(doc.read_text(encoding="utf-8"))
        dotted = rf"((?:{'|'.join(PACKAGES)})(?:\.\w+)+)(?:\(.*\))?"
        names = {m.group(1) for s in spans if (m := re.fullmatch(dotted, s))}
        for name in sorted(names):
            parts = name.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                except ModuleNotFoundError:
                    continue
                try:
                    for attr in parts[i:]:
                        obj = getattr(obj, attr)
                except AttributeError:
                    wrong.append(f"{doc.relative_to(ROOT)}: `{name}` ({'.'.join(parts[:i])} has no {attr})")
                break
            else:
                wrong.append(f"{doc.relative_to(ROOT)}: `{name}` (no such module)")
    assert not wrong, "\n".join(wrong)


def _cli_options() -> dict[str, set[str]]:
    """Every option string of each pgc command, its sub-commands' included (key "COMMAND"), and of each
    sub-command alone (key "COMMAND SUBCOMMAND")."""
    import argparse

    from pgc.cli.main import COMMANDS, _load

    known = {}

    def options(parser, name: str) -> set[str]:
        out = set()
        for action in parser._actions:
            out |= set(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    known[f"{name} {sub_name}"] = options(sub, f"{name} {sub_name}")
                    out |= known[f"{name} {sub_name}"]
        return out

    for name in COMMANDS:
        parser = argparse.ArgumentParser()
        _load(name).add_arguments(parser)
        known[name] = options(parser, name)
    return known


def test_every_pgc_option_in_the_docs_is_the_command_lines():
    """Options on a `pgc COMMAND ...` line are that command's (`pgc COMMAND --help`), and on a `pgc COMMAND
    SUBCOMMAND ...` line that sub-command's (`pgc audit system --help`); a command with sub-commands names one
    before its options (the docs use no deprecated spelling such as `pgc audit --system SPEC`); an option alone
    in a code span is some command's."""
    known = _cli_options()
    every = set().union(*known.values())
    unknown, checked = [], 0
    for doc in CURRENT_DOCS:
        text = doc.read_text(encoding="utf-8")
        for span in _code_spans(text):
            span = re.split(r"\s#\s", span, maxsplit=1)[0]
            for m in re.finditer(r"(?:^|[\s(|;])pgc ([a-z]+)\b([^|;]*)", span):
                where = f"{doc.relative_to(ROOT)}: {span.strip()[:100]}"
                if m.group(1) not in known:  # prose ("this pgc reads ..."), unless the span is a command line
                    if span.strip().startswith(f"pgc {m.group(1)}"):
                        unknown.append(f"no command pgc {m.group(1)}: {where}")
                    continue
                command, rest = m.group(1), m.group(2).split()
                if rest and f"{command} {rest[0]}" in known:
                    command = f"{command} {rest[0]}"
                elif (
                    rest
                    and rest[0].startswith("-")
                    and rest[0] not in ("-h", "--help")
                    and any(key.startswith(f"{command} ") for key in known)
                ):
                    unknown.append(f"pgc {command} takes a sub-command before {rest[0]}: {where}")
                for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", m.group(2)):
                    checked += 1
                    if option not in known[command]:
                        unknown.append(f"pgc {command} has no {option}: {where}")
            if span.startswith("--"):
                unknown += [
                    f"{doc.relative_to(ROOT)}: no pgc command has {option}"
                    for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span)
                    if option not in every | FOREIGN_OPTIONS
                ]
    assert checked > 300 and not unknown, "\n".join(unknown)


def test_format_versions_the_docs_state_are_the_schemas():
    from pgc.schemas import SCHEMAS, SchemaError, load

    stated = []
    for doc in CURRENT_DOCS:
        text = doc.read_text(encoding="utf-8")
        stated += [(doc, kind, int(v)) for kind, v in re.findall(r'"kind": "([\w-]+)", "format_version": (\d+)', text)]
        for example in re.findall(r"`(in\.json: kind '[\w-]+' format_version \d+ is not supported[^`]*)`", text):
            kind, version = re.match(r"in\.json: kind '([\w-]+)' format_version (\d+)", example).groups()
            with pytest.raises(SchemaError) as refused:
                load({"kind": kind, "format_version": int(version)}, where="in.json")
            assert str(refused.value) == example, f"{doc.name} quotes an error pgc does not print"
    assert stated
    wrong = [
        f"{doc.name}: {kind} format_version {v}, the schema's is {SCHEMAS[kind].FORMAT_VERSION}"
        for doc, kind, v in stated
        if SCHEMAS[kind].FORMAT_VERSION != v
    ]
    assert not wrong, "\n".join(wrong)
