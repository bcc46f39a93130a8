"""Every marked example in README.md and docs/*.md runs as written, from an empty folder outside the repository.

The convention: an HTML comment on the line right before a fenced code block marks it (Markdown renders no
comment), in one of three forms:

    <!-- example NAME: FILE -->          the block is the file FILE of example NAME
    <!-- example NAME: python FILE -->   the same, and the step "python FILE"
    <!-- example NAME: run -->           every line of the block is a step (its comment after "  # " aside)

An example may gather blocks from several docs (a system file in one, its tests in another). Each example
runs in its own empty temporary folder: its files are written first, then its steps run in the docs' order
(README.md, then docs/*.md by name), ``pgc``, ``python`` and ``pytest`` from this checkout's virtual
environment. Each step must exit 0, print no traceback, and print every "double-quoted" text of its
comment. To keep the suite fast, ``--samples N`` on a ``pgc audit`` line and ``samples=N`` in a file are cut
to SAMPLES (MESSAGE_SAMPLES where the example imports Flower or NVFlare, whose message paths cost 1–4 ms a
release); the rest runs as the docs write it.

Every code block that defines a user's own System, Flower ClientApp, NVFlare Filter or mechanism, or imports
a user's module (``my_*``), carries a mark, and every ``my_*`` file a doc names is a file of some example."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
SAMPLES, MESSAGE_SAMPLES = 2000, 300

MARK = re.compile(
    r"^<!-- example (?P<name>[\w-]+): (?P<what>run|(?:python )?[\w.-]+) -->\n"
    r"```(?P<lang>\w*)\n(?P<body>.*?)^```",
    re.M | re.S,
)
BLOCK = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.M | re.S)


@dataclass
class Example:
    name: str
    files: dict[str, str] = field(default_factory=dict)  # file name -> text
    steps: list[tuple[str, str]] = field(default_factory=list)  # (command line, comment)
    where: list[str] = field(default_factory=list)  # doc names, for the test id


def examples() -> dict[str, Example]:
    found: dict[str, Example] = {}
    for doc in DOCS:
        for m in MARK.finditer(doc.read_text(encoding="utf-8")):
            ex = found.setdefault(m["name"], Example(m["name"]))
            if doc.name not in ex.where:
                ex.where.append(doc.name)
            what = m["what"]
            if what == "run":
                for line in m["body"].replace("\\\n", " ").splitlines():
                    command, comment = (re.split(r"\s+#\s", line, maxsplit=1) + [""])[:2]
                    if command.strip():
                        ex.steps.append((command.strip(), comment.strip()))
                continue
            file = what.removeprefix("python ")
            assert file not in ex.files, f"{doc.name}: example {m['name']} writes {file} twice"
            ex.files[file] = m["body"]
            if what.startswith("python "):
                ex.steps.append((f"python {file}", ""))
    return found


EXAMPLES = examples()


def _sends_messages(ex: Example) -> bool:
    return any(re.search(r"^\s*(from|import) (flwr|nvflare|pgc\.flower)\b", text, re.M) for text in ex.files.values())


def _small(text: str, samples: int) -> str:
    return re.sub(r"\bsamples=[\d_]+", f"samples={samples}", text)


def _argv(command: str, samples: int) -> list[str]:
    argv = shlex.split(command)
    head = {"pgc": [str(BIN / "pgc")], "python": [sys.executable], "pytest": [sys.executable, "-m", "pytest"]}
    assert argv[0] in head, f"a step runs pgc, python or pytest, not {argv[0]!r}: {command}"
    if argv[:2] == ["pgc", "audit"] and argv[2:3] != ["recertify"]:  # recertify re-runs the result's own sizes
        argv = [a for i, a in enumerate(argv) if a != "--samples" and (i == 0 or argv[i - 1] != "--samples")]
        argv += ["--samples", str(samples)]
    return head[argv[0]] + argv[1:]


@pytest.mark.parametrize(
    "name", sorted(EXAMPLES), ids=[f"{n} ({', '.join(EXAMPLES[n].where)})" for n in sorted(EXAMPLES)]
)
@pytest.mark.slow
def test_doc_example_runs_as_written_from_an_empty_folder(name, tmp_path):
    ex = EXAMPLES[name]
    assert ex.files and ex.steps, f"example {name} needs a file and a step (a run block or a python FILE mark)"
    samples = MESSAGE_SAMPLES if _sends_messages(ex) else SAMPLES
    for file, text in ex.files.items():
        (tmp_path / file).write_text(_small(text, samples), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "PYTHON", "VIRTUAL_ENV")) and k != "COV_CORE_SOURCE"
    }
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PGC_PROGRESS_INTERVAL_S="30")
    for command, comment in ex.steps:
        argv = _argv(command, samples)
        r = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        said = f"{command}  (ran: {shlex.join(argv[1:])})\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        assert r.returncode == 0, said
        assert "Traceback" not in r.stdout + r.stderr, said
        for quoted in re.findall(r'"([^"]+)"', comment):
            assert quoted in r.stdout, (quoted, said)


# --- every user example is marked ---------------------------------------------------------------------

USER_CODE = re.compile(
    r"^\s*(def release\(|class \w+\((?:NumPyClient|Filter)\)|app = ClientApp\(|"
    r"def __call__\(self, gradients|(?:from|import) my_\w+)",
    re.M,
)


def test_every_user_example_in_the_docs_is_marked():
    unmarked, named, written = [], set(), {f for ex in EXAMPLES.values() for f in ex.files}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        marked = {m.start("lang") for m in MARK.finditer(text)}
        for m in BLOCK.finditer(text):
            if m.start("lang") not in marked and "(Protocol)" not in m["body"] and USER_CODE.search(m["body"]):
                unmarked.append(f"{doc.name}:{text.count(chr(10), 0, m.start()) + 1}")
        named |= {f"{module}.py" for module in re.findall(r"(?<![\w/.])(my_\w+)(?:\.py)?[:\s]", text)}
    assert not unmarked, f"code blocks of a user's own system, client or filter without an example mark: {unmarked}"
    assert named <= written, f"the docs name user files no example writes: {sorted(named - written)}"
    assert {"my-system", "flower-app", "nvflare-filter"} <= set(EXAMPLES), sorted(EXAMPLES)
