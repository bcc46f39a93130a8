"""Generators of hostile inputs, kills and concurrent writers for the ``pgc`` commands, and the checks
of what every case must end in. Shared by the tests (``tests/test_reliability_generated.py``) and the
long run (``scripts/reliability_run.py``), which only choose how many cases to try.

Every case runs in a fresh case folder ``ROOT`` laid out as ``ROOT/work`` (the working folder, where
the command may write only ``out*``, ``runs/`` and ``results/``) and ``ROOT/outside`` (files that must
stay untouched; ``work/link`` points there). A case passes when the command ends in success or in
exactly one ``error:`` line on stderr with exit code 2 — no traceback, no hang — and nothing changed
in ``ROOT`` outside the allowed names.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import pickle
import shutil
import signal
import stat
import subprocess
import sys
import time
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
ALLOWED_PREFIXES = ("work/out", "work/runs", "work/results")
HANG_S = 30.0  # an in-process case slower than this is a hang (the tiny budgets take well under 5 s)
SUBPROCESS_TIMEOUT_S = 120.0


# ---------------------------------------------------------------------------------------------
# running one case and judging it
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    argv: list[str]
    rc: int | None
    err: str = ""
    wall_s: float = 0.0
    traceback: bool = False
    hang: bool = False
    outside: list[str] = field(default_factory=list)

    def problems(self, ok_codes=(0, 1, 2)) -> list[str]:
        """What is wrong with this outcome (empty: the case passed). Exit code 1 is the attack's
        "ceiling violated" finding, a success."""
        found = []
        if self.traceback or "Traceback (most recent call last)" in self.err:
            found.append("traceback")
        if self.hang:
            found.append("hang")
        if not self.hang and self.rc not in ok_codes:
            found.append(f"exit code {self.rc}")
        if self.rc == 2:
            lines = [line for line in self.err.splitlines() if line.strip()]
            if len(lines) != 1 or "error:" not in lines[0]:
                found.append("not a one-line error")
        if self.outside:
            found.append("wrote outside the output folder: " + ", ".join(self.outside[:3]))
        return found


class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def run_inprocess(argv: list[str], cwd: Path, limit_s: float = HANG_S) -> Outcome:
    """``pgc ARGV`` in this process with ``cwd`` as working folder, stdout and stderr captured."""
    from pgc.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    outcome = Outcome(list(argv), None)
    start = time.perf_counter()
    use_alarm = hasattr(signal, "setitimer") and _in_main_thread()
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    try:
        with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, limit_s)
            try:
                outcome.rc = main(list(argv))
            except SystemExit as exc:  # argparse
                outcome.rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except _Hang:
                outcome.hang = True
            except BaseException:  # noqa: BLE001 - any escaping exception is what the cases look for
                outcome.traceback = True
                err.write(traceback.format_exc())
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    outcome.wall_s = time.perf_counter() - start
    outcome.hang = outcome.hang or outcome.wall_s > limit_s
    outcome.err = err.getvalue()
    return outcome


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pgc.cli", *argv]


def child_env() -> dict[str, str]:
    """The environment of child ``pgc`` processes: this checkout's code first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_subprocess(argv: list[str], cwd: Path, timeout: float = SUBPROCESS_TIMEOUT_S) -> Outcome:
    outcome = Outcome(list(argv), None)
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cli(*argv),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=child_env(),
            stdin=subprocess.DEVNULL,
        )
        outcome.rc, outcome.err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        outcome.hang = True
        outcome.err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    outcome.wall_s = time.perf_counter() - start
    return outcome


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root`` (links not followed): type, and size and mtime for non-folders."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            try:
                st_ = os.lstat(p)
            except FileNotFoundError:
                continue
            kind = stat.S_IFMT(st_.st_mode)
            rel = os.path.relpath(p, root)
            seen[rel] = (kind,) if stat.S_ISDIR(st_.st_mode) else (kind, st_.st_size, st_.st_mtime_ns)
    return seen


def changed_outside(before: dict, after: dict, allowed=ALLOWED_PREFIXES, folders=()) -> list[str]:
    """Paths changed under the case root that are neither under an ``allowed`` prefix nor one of the
    ``folders`` (the output's parent folders, which a command may create)."""
    changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
    return sorted(
        p
        for p in changed
        if not p.startswith(allowed) and not (p in folders and stat.S_ISDIR(after.get(p, before.get(p))[0]))
    )


def declared_outputs(argv: list[str], root: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``--out`` values of ``argv`` that lie strictly inside ``root/work``, as prefixes relative to
    ``root`` (a result file's name without its suffix, so its PNG beside it counts), and their parent
    folders up to ``work``."""
    prefixes, folders = [], []
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag != "--out" or "\0" in value:
            continue
        full = os.path.normpath(os.path.join(root / "work", os.path.expanduser(value)))
        rel = os.path.relpath(full, root)
        if not rel.startswith("work" + os.sep):
            continue
        prefixes.append(os.path.splitext(rel)[0] if rel.endswith(".json") else rel)
        parent = os.path.dirname(rel)
        while parent not in ("work", ""):
            folders.append(parent)
            parent = os.path.dirname(parent)
    return tuple(prefixes), tuple(folders)


def make_case_root(base: Path, name: str) -> Path:
    """``base/name`` with ``work/`` (the working folder), ``outside/`` (sentinels) and ``work/link``."""
    root = base / name
    (root / "work").mkdir(parents=True)
    (root / "outside").mkdir()
    (root / "outside" / "precious.txt").write_text("precious")
    (root / "work" / "mine.txt").write_text("mine")
    (root / "work" / "link").symlink_to(root / "outside")
    return root


def run_case(argv: list[str], root: Path, *, subprocess_: bool = False) -> Outcome:
    before = snapshot(root)
    work = root / "work"
    outcome = run_subprocess(argv, work) if subprocess_ else run_inprocess(argv, work)
    prefixes, folders = declared_outputs(argv, root)
    outcome.outside = changed_outside(before, snapshot(root), ALLOWED_PREFIXES + prefixes, folders)
    return outcome


# ---------------------------------------------------------------------------------------------
# hostile values
# ---------------------------------------------------------------------------------------------

NASTY_TEXT = [
    "",
    " ",
    "-1",
    "0",
    "-0",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "+inf",
    "1e309",
    "-1e309",
    "1e300",
    "99999999999999999999999",
    "0x10",
    "1_000",
    "1,2",
    "abc",
    "none",
    "None",
    "true",
    "[]",
    "{}",
    "ε",
    "\u202e1",
    "9.8 9.9",
    "--",
    "-",
    "../..",
    "/",
    "/dev/null",
    "/dev/zero",
    "link",
    "mine.txt",
    "outside",
    "../outside/precious.txt",
    "a" * 300,
]

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 10**30, 10_000_001]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.0, -0.0]),
    st.sampled_from(NASTY_TEXT + ["laplace", "prs", "none", "greedy", "sample", "score", "all", "inf"]),
    st.text(max_size=12),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
)

CONFIG_KEYS = [
    "mechanism",
    "epsilon",
    "clip",
    "reduced_dim",
    "buffer_size",
    "submissions",
    "workers",
    "gravities",
    "learning_rate",
    "exploration_start",
    "exploration_decay",
    "rounds",
    "hyper",
    "physics",
    "target_score",
    "window",
    "stop_at_success",
    "zero_information",
    "seed",
    "protect",
    "score_epsilon",
    "not_a_field",
]
HYPER_KEYS = ["gamma", "lam", "beta", "cap", "bootstrap_truncated", "action_selection", "x"]
PHYSICS_KEYS = ["gravity", "masscart", "masspole", "length", "force_mag", "tau", "x"]


@st.composite
def config_documents(draw) -> bytes:
    """The bytes of a ``--config`` file: mostly JSON objects of TrainConfig keys with hostile values,
    sometimes another JSON type, NaN/Infinity tokens, truncated JSON or bytes that are not UTF-8."""
    form = draw(st.sampled_from(["object"] * 6 + ["other", "truncated", "binary"]))
    if form == "binary":
        return draw(st.binary(max_size=64))
    if form == "other":
        return json.dumps(draw(JSON_VALUES)).encode()
    doc = {}
    for key in draw(st.lists(st.sampled_from(CONFIG_KEYS), max_size=5, unique=True)):
        if key in ("hyper", "physics") and draw(st.booleans()):
            keys = HYPER_KEYS if key == "hyper" else PHYSICS_KEYS
            doc[key] = {k: draw(JSON_SCALARS) for k in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True))}
        else:
            doc[key] = draw(JSON_VALUES)
    text = json.dumps(doc)  # NaN and ±inf become the tokens NaN / Infinity, which Python's json reads
    if form == "truncated" and text:
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return text.encode()


# budgets that keep a valid case tiny: these flags come first, generated ones after (argparse: last wins)
TINY = {
    "train": ["--submissions", "20", "--workers", "2", "--no-progress"],
    "audit": [
        "--samples",
        "200",
        "--mechanism-samples",
        "200",
        "--compositions",
        "--no-progress",
        "--search-trials",
        "1",
        "--search-budget",
        "quick",
    ],
    "attack": ["--targets", "6", "--budget", "5", "--epochs", "1", "--no-progress"],
    "report": [],
    "tune": [
        "--trials",
        "1",
        "--batch",
        "1",
        "--runs-per-trial",
        "1",
        "--submissions",
        "20",
        "--rungs",
        "1",
        "--sampler",
        "random",
        "--mechanisms",
        "laplace",
        "--audit-samples",
        "200",
    ],
}

SMALL_INT = st.integers(1, 3).map(str)
BIG_INT = st.sampled_from(["100001", "10000001", "100000000", "99999999999999999999"])
SMALL_FLOAT = st.sampled_from(["0.5", "1", "2", "9.8", "1e-3"])
NASTY = st.sampled_from(NASTY_TEXT)


def _value(kind: str):
    base = {
        "int": st.one_of(SMALL_INT, BIG_INT),
        "float": st.one_of(SMALL_FLOAT, BIG_INT),
        "text": NASTY,
        "mech": st.sampled_from(["laplace", "prs", "none", "gauss"]),
        "path": st.sampled_from(
            [
                "out",
                "out/x.json",
                "out/r",
                ".",
                "..",
                "/",
                "",
                "link",
                "link/x.json",
                "mine.txt",
                "/dev/null",
                "out/../..",
                "~",
                "run",
                "run/summary.json",
                "fifo",
                "a\x00b",
            ]
        ),
    }[kind]
    return st.one_of(base, base, NASTY)  # the right kind of value two times in three


FLAGS = {
    "train": {
        "--config": "path",
        "--mechanism": "mech",
        "--epsilon": "float",
        "--clip": "float",
        "--reduced-dim": "int",
        "--buffer": "int",
        "--submissions": "int",
        "--workers": "int",
        "--lr": "float",
        "--rounds": "int",
        "--gravities": "float",
        "--action-selection": "text",
        "--stop-at-success": None,
        "--protect": "text",
        "--score-epsilon": "float",
        "--trials": "int",
        "--seed": "int",
        "--out": "path",
        "--force": None,
        "--no-transcript": None,
        "--bogus": "text",
    },
    "audit": {
        "--mechanism": "mech",
        "--run": "path",
        "--epsilon": "float",
        "--clip": "float",
        "--reduced-dim": "int",
        "--rounds": "int",
        "--white-box": None,
        "--dim": "int",
        "--trial": "int",
        "--initial": None,
        "--pairs": "text",
        "--samples": "int",
        "--confidence": "float",
        "--delta": "float",
        "--channels": "text",
        "--epsilons": "float",
        "--distances": "float",
        "--seed": "int",
        "--out": "path",
    },  # --self-test and the adversarial searches: minutes, not generated
    "attack": {
        "--run": "path",
        "--plot": "path",
        "--model": "text",
        "--trial": "int",
        "--mechanism": "mech",
        "--epsilon": "float",
        "--clip": "float",
        "--candidates": "float",
        "--range": "float",
        "--budget": "int",
        "--k": "int",
        "--targets": "int",
        "--channels": "text",
        "--attackers": "text",
        "--alpha": "float",
        "--lam": "float",
        "--sweep": None,
        "--epsilons": "float",
        "--seed": "int",
        "--out": "path",
    },  # --active crafts a model (minutes): not generated
    "report": {"--out": "path", "--title": "text", "": "path"},
    "tune": {
        "--out": "path",
        "--storage": "text",
        "--study": "text",
        "--trials": "int",
        "--mode": "text",
        "--min-success": "float",
        "--utility": "text",
        "--privacy": "text",
        "--seed": "int",
        "--mechanisms": "mech",
        "--epsilon": "float",
        "--clip": "float",
        "--buffer": "int",
        "--lr": "float",
        "--submissions": "int",
        "--rungs": "float",
        "--prune-below-mu": "float",
        "--gravities": "float",
        "--hyper": "text",
        "--export-only": None,
        "--timeout": "float",
    },
}

# flags whose valid values are expensive: a generated value replaces the tiny budget only when it is
# tiny or far beyond every limit (a legitimately long job is not a hang)
_COSTLY = {"--samples", "--mechanism-samples", "--targets", "--budget", "--submissions", "--trials", "--epochs"}


@st.composite
def argument_vectors(draw, command: str) -> list[str]:
    """``pgc COMMAND ...`` with random flags and values (mostly of the right kind, often hostile)."""
    flags = FLAGS[command]
    argv = [command, *TINY[command]]
    if command == "audit" and draw(st.booleans()):
        argv += ["--mechanism", "laplace", "--epsilon", "1"]
    if command == "report":
        argv += [draw(_value("path"))]
    for flag in draw(st.lists(st.sampled_from(sorted(flags)), max_size=5)):
        kind = flags[flag]
        if kind is None:
            argv.append(flag)
            continue
        n = draw(st.integers(1, 2)) if kind in ("float", "int", "text", "mech") else 1
        values = [draw(_value(kind)) for _ in range(n)]
        if flag in _COSTLY:
            values = [
                v if (v.isdigit() and (int(v) <= 3 or int(v) > 10**7)) or not v.isdigit() else "2" for v in values
            ]
        if command == "tune" and flag == "--trials":
            values = [v if not v.isdigit() or int(v) > 10**7 else "1" for v in values]
        argv += ([flag] if flag else []) + values
    if "--out" not in argv and command in ("train", "tune", "report"):
        argv += ["--out", "out"]
    if command in ("audit", "attack") and "--out" not in argv:
        argv += ["--out", "out/result.json"]
    return argv


# ---------------------------------------------------------------------------------------------
# hostile result files
# ---------------------------------------------------------------------------------------------


class _Trap:
    """Unpickling this creates the file ``path``: an object array that is ever unpickled leaves a trace."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def make_run(folder: Path) -> Path:
    """A tiny complete run folder (with transcript) to mutate; trained in this process."""
    from pgc.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", "--submissions", "24", "--workers", "2", "--no-progress", "--out", str(folder)]) == 0
    return folder


def _npy_header_bytes(shape, dtype="<f4") -> bytes:
    header = {"descr": dtype, "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


MUTATIONS = [
    "truncate",
    "flip",
    "nan",
    "inf",
    "wrong_dtype",
    "object_array",
    "huge_shape",
    "missing_array",
    "wrong_shape",
    "symlink_outside",
    "symlink_dev_zero",
    "fifo",
    "folder",
    "empty",
    "summary_json_type",
    "summary_trials_type",
    "summary_truncated",
    "summary_binary",
    "summary_fifo",
    "summary_nan",
    "mechanism_record",
    "checkpoint_garbage",
    "checkpoint_pickle",
    "scores_object",
    "trial_dir_escape",
    "config_type",
]


@st.composite
def mutations(draw) -> tuple:
    kind = draw(st.sampled_from(MUTATIONS))
    return (
        kind,
        draw(st.integers(0, 2**32 - 1)),
        draw(JSON_VALUES) if kind.startswith(("summary", "config")) or kind == "mechanism_record" else None,
    )


def mutate_run(run: Path, mutation: tuple, trap_file: Path) -> None:
    """Apply one hostile change to the run folder ``run`` (a copy). ``trap_file`` appears if a pickle
    in a result file is ever executed."""
    kind, seed, value = mutation
    rng = np.random.default_rng(seed)
    trial = run / "trial_000"
    tpath = trial / "transcript.npz"
    spath = run / "summary.json"
    if kind in ("truncate", "flip"):
        data = bytearray(tpath.read_bytes())
        if kind == "truncate":
            data = data[: int(rng.integers(0, len(data)))]
        else:
            for i in rng.integers(0, len(data), size=int(rng.integers(1, 16))):
                data[i] ^= int(rng.integers(1, 256))
        tpath.write_bytes(bytes(data))
    elif kind in ("nan", "inf", "wrong_dtype", "object_array", "missing_array", "wrong_shape"):
        with np.load(tpath, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        name = str(rng.choice(sorted(arrays)))
        if kind in ("nan", "inf"):
            name = str(rng.choice(["gradient", "thetas", "score"]))
            arr = arrays[name].astype(np.float64 if name != "gradient" else np.float32)
            arr.flat[int(rng.integers(0, arr.size))] = np.nan if kind == "nan" else -np.inf
            arrays[name] = arr
        elif kind == "wrong_dtype":
            arrays[name] = arrays[name].astype(rng.choice(["U3", "complex64", "bool", "int8", "float16", "S2"]))
        elif kind == "object_array":
            arrays[name] = np.array([_Trap(str(trap_file))] * max(1, len(arrays[name])), dtype=object)
        elif kind == "missing_array":
            del arrays[name]
        else:
            arrays[name] = arrays[name].reshape(-1)[: max(0, arrays[name].size - 1)]
        with open(tpath, "wb") as fh:
            np.savez(fh, **arrays)
    elif kind == "huge_shape":  # a member whose header claims an enormous array
        name = str(rng.choice(["gradient", "thetas", "score", "agent"]))
        shape = [(int(rng.integers(10**9, 10**15)), 112), (2**62,), (10**6, 10**6)][int(rng.integers(0, 3))]
        with np.load(tpath, allow_pickle=False) as zz:
            arrays = {k: zz[k] for k in zz.files}
        with zipfile.ZipFile(tpath, "w") as z:
            for k, arr in arrays.items():
                buf = io.BytesIO()
                np.save(buf, arr)
                if k == name:
                    z.writestr(f"{k}.npy", _npy_header_bytes(shape) + b"\0" * 64)
                else:
                    z.writestr(f"{k}.npy", buf.getvalue())
    elif kind == "symlink_outside":
        tpath.unlink()
        (run.parent / "elsewhere.npz").write_bytes(b"PK\x03\x04 not a zip")
        tpath.symlink_to(run.parent / "elsewhere.npz")
    elif kind == "symlink_dev_zero":
        tpath.unlink()
        tpath.symlink_to("/dev/zero")
    elif kind == "fifo":
        tpath.unlink()
        os.mkfifo(tpath)
    elif kind == "folder":
        tpath.unlink()
        tpath.mkdir()
    elif kind == "empty":
        tpath.write_bytes(b"")
    elif kind == "summary_json_type":
        spath.write_text(json.dumps(value))
    elif kind == "summary_trials_type":
        doc = json.loads(spath.read_text())
        doc["trials"] = value
        spath.write_text(json.dumps(doc))
    elif kind == "summary_truncated":
        text = spath.read_text()
        spath.write_text(text[: int(rng.integers(0, len(text)))])
    elif kind == "summary_binary":
        spath.write_bytes(rng.integers(0, 256, size=64, dtype=np.uint8).tobytes())
    elif kind == "summary_fifo":
        spath.unlink()
        os.mkfifo(spath)
    elif kind == "summary_nan":
        doc = json.loads(spath.read_text())
        doc["trials"][0][str(rng.choice(["fst", "final_mu", "updates", "submissions", "seed"]))] = [
            math.nan,
            math.inf,
            -1,
            10**40,
            "x",
            None,
        ][int(rng.integers(0, 6))]
        spath.write_text(json.dumps(doc))
    elif kind == "mechanism_record":
        doc = json.loads(spath.read_text())
        rec = doc["trials"][0].get("mechanism")
        if isinstance(rec, dict) and rng.integers(0, 2):
            rec[str(rng.choice(sorted(rec)))] = value
        else:
            doc["trials"][0]["mechanism"] = value
        spath.write_text(json.dumps(doc))
    elif kind == "config_type":
        doc = json.loads(spath.read_text())
        cfg = doc["trials"][0]["config"]
        cfg[str(rng.choice(sorted(cfg)))] = value
        spath.write_text(json.dumps(doc))
    elif kind == "checkpoint_garbage":
        (trial / "checkpoint.pt").write_bytes(rng.integers(0, 256, size=200, dtype=np.uint8).tobytes())
    elif kind == "checkpoint_pickle":
        (trial / "checkpoint.pt").write_bytes(pickle.dumps(_Trap(str(trap_file))))
    elif kind == "scores_object":
        np.save(trial / "scores.npy", np.array([_Trap(str(trap_file))], dtype=object), allow_pickle=True)
    elif kind == "trial_dir_escape":
        doc = json.loads(spath.read_text())
        doc["trials"][0]["dir"] = str(rng.choice(["..", "../outside", "/etc", "trial_000/../../outside", ""]))
        spath.write_text(json.dumps(doc))
    else:  # pragma: no cover - the list above is exhaustive
        raise AssertionError(kind)


RESULT_READERS = {
    "audit": [
        "audit",
        "--run",
        "{run}",
        "--samples",
        "200",
        "--mechanism-samples",
        "200",
        "--compositions",
        "--pairs",
        "9.7:9.9",
        "--no-progress",
        "--out",
        "out/audit.json",
    ],
    "attack": [
        "attack",
        "--run",
        "{run}",
        "--targets",
        "6",
        "--budget",
        "5",
        "--attackers",
        "likelihood",
        "--no-progress",
        "--out",
        "out/attack.json",
    ],
    "report": ["report", "{run}", "--out", "out"],
}

# result JSON files of the other commands, for ``pgc report``
RESULT_KINDS = ["replicate.json", "audit.json", "attack.json", "tune.json", "pipeline.json", "x.json"]


@st.composite
def result_documents(draw) -> tuple[str, bytes]:
    """(file name, bytes) of a result JSON for ``pgc report``: a known kind with hostile fields."""
    name = draw(st.sampled_from(RESULT_KINDS))
    kind = name.split(".")[0]
    form = draw(st.sampled_from(["object", "object", "object", "other", "binary"]))
    if form == "binary":
        return name, draw(st.binary(max_size=48))
    if form == "other":
        return name, json.dumps(draw(JSON_VALUES)).encode()
    doc = {
        "kind": draw(st.sampled_from([kind, kind, "replicate", "audit", "attack", "tune", 3, None])),
        "format": draw(st.sampled_from([f"pgc-{kind}/1", None, 1])),
    }
    for key in draw(
        st.lists(
            st.sampled_from(
                [
                    "channels",
                    "results",
                    "settings",
                    "trials",
                    "notes",
                    "plots",
                    "counts",
                    "pareto_front",
                    "mode",
                    "spec",
                    "rows",
                    "targets",
                    "steps",
                    "inputs",
                    "reading",
                    "sweep",
                    "violations",
                ]
            ),
            max_size=4,
            unique=True,
        )
    ):
        doc[key] = draw(JSON_VALUES)
    return name, json.dumps(doc).encode()


MAX_EXAMPLE_BYTES = 200_000  # the committed example of a kind that damaged documents start from, at most


def result_examples() -> dict[str, Path]:
    """One committed result of every kind under ``results/`` (the smallest): what damaged documents start from."""
    if _EXAMPLES:
        return _EXAMPLES
    for path in sorted((REPO / "results").rglob("*.json")):
        if path.stat().st_size > MAX_EXAMPLE_BYTES:
            continue
        try:
            doc = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if isinstance(kind, str) and (kind not in _EXAMPLES or path.stat().st_size < _EXAMPLES[kind].stat().st_size):
            _EXAMPLES[kind] = path
    return _EXAMPLES


_EXAMPLES: dict[str, Path] = {}


def _paths(node, prefix=(), depth=0):
    """Every (path, value) in a JSON document, to depth 6 and at most 40 entries per list or object."""
    yield prefix, node
    if depth >= 6:
        return
    items = (
        list(node.items())[:40]
        if isinstance(node, dict)
        else list(enumerate(node))[:40]
        if isinstance(node, list)
        else []
    )
    for key, value in items:
        yield from _paths(value, prefix + (key,), depth + 1)


@st.composite
def damaged_results(draw) -> tuple[str, str, bytes]:
    """(kind, file name, bytes): the committed example of a result kind with one to three of its fields (at
    any depth) deleted or replaced by a hostile JSON value, or cut short."""
    examples = result_examples()
    kind = draw(st.sampled_from(sorted(examples)))
    doc = json.loads(examples[kind].read_text())
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p, _ in _paths(doc) if p and not (len(p) == 1 and p[0] == "kind")]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON_VALUES)
    text = json.dumps(doc)
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return kind, f"{kind}.json", text.encode()


# the commands that read a result kind besides pgc report
KIND_READERS = {
    "attack": [["attack", "--plot", "{file}"]],
    "replicate-raw": [["replicate", "--from-raw", "{file}", "--out", "out"]],
}


def damaged_result_case(base: Path, name: str, damaged: tuple[str, str, bytes]) -> tuple[Outcome, list[str]]:
    """``pgc report`` (and the kind's other readers) on a damaged committed result."""
    kind, file_name, blob = damaged
    root = make_case_root(base, name)
    folder = root / "work" / "out-input"
    folder.mkdir()
    (folder / file_name).write_bytes(blob)
    file = f"out-input/{file_name}"
    outcomes = []
    for argv in [["report", file, "--out", "out"]] + KIND_READERS.get(kind, []):
        outcomes.append(run_case([a.replace("{file}", file) for a in argv], root))
        shutil.rmtree(root / "work" / "out", ignore_errors=True)
    earlier = [f"{o.argv[0]}: {p}" for o in outcomes[:-1] for p in o.problems()]
    return _finish(outcomes[-1], root, earlier)


# ---------------------------------------------------------------------------------------------
# kills
# ---------------------------------------------------------------------------------------------

TUNE_ARGS = [
    "--batch",
    "1",
    "--runs-per-trial",
    "1",
    "--submissions",
    "30",
    "--rungs",
    "1",
    "--sampler",
    "random",
    "--mechanisms",
    "laplace",
    "--heartbeat",
    "1",
    "--grace",
    "3",
]


def kill_argv(kind: str, out: Path, seed: int, trials: int = 3) -> list[str]:
    """A tiny (1–4 s) ``pgc KIND`` writing ``out``."""
    if kind == "train":
        return [
            "train",
            "--submissions",
            "300",
            "--workers",
            "3",
            "--trials",
            "2",
            "--no-progress",
            "--seed",
            str(seed),
            "--out",
            str(out),
            "--force",
        ]
    if kind == "replicate":
        return [
            "replicate",
            "--quick",
            "--trials",
            "1",
            "--cap",
            "60",
            "--curve-trials",
            "0",
            "--workers",
            "2",
            "--controls",
            "none",
            "--mechanisms",
            "laplace",
            "--seed",
            str(seed),
            "--out",
            str(out),
            "--force",
            "--no-progress",
        ]
    if kind == "pipeline":
        return ["pipeline", "--quick", "--skip", "audit", "attack", "--seed", str(seed), "--out", str(out), "--force"]
    if kind == "tune":
        return ["tune", "--trials", str(trials), *TUNE_ARGS, "--seed", "0", "--out", str(out)]
    raise ValueError(kind)


def result_state(kind: str, out: Path) -> int | None:
    """The seed of the complete result at ``out`` (None: absent); raises AssertionError on a half-written
    result. For tune: the number of finished trials (the study may be absent)."""
    if kind == "tune":
        return tune_counts(out)["COMPLETE"] if (out / "study.db").exists() else None
    target = out / "sampled" if kind == "replicate" else out
    if not os.path.lexists(target):
        return None
    from pgc.a3c.rundir import MARKER_FILE, load_run

    assert (target / MARKER_FILE).is_file(), f"{target} has no marker"
    if kind == "train":
        summary, trials = load_run(target)
        for t in trials:
            t.theta()
            assert len(t.transcript()) == t.summary["submissions"]
        return summary["trials"][0]["seed"]
    if kind == "replicate":
        doc = json.loads((target / "replicate.json").read_text())
        assert doc["kind"] == "replicate" and (target / "grid.raw.json").is_file()
        return doc["spec"]["seed"]
    doc = json.loads((target / "pipeline.json").read_text())
    assert (target / "report" / "report.html").is_file() and (target / "report" / "report.json").is_file()
    load_run(target / "train")
    return doc["seed"]


def tune_counts(out: Path, study: str = "pgc-tune") -> dict:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.RDBStorage(f"sqlite:///{out / 'study.db'}")
    try:
        try:
            s = optuna.load_study(study_name=study, storage=storage)
        except KeyError:
            return {"COMPLETE": 0, "RUNNING": 0, "FAIL": 0, "PRUNED": 0, "SURPLUS": 0, "params": []}
        trials = s.get_trials(deepcopy=False)
        counts = {
            name: sum(t.state.name == name for t in trials)
            for name in ("COMPLETE", "RUNNING", "FAIL", "PRUNED", "WAITING")
        }
        # a trial started past the budget by a worker asking at the same moment would be failed and marked
        # "surplus" (pgc.tuning.study); workers of one SQLite study ask one at a time, so none is expected
        counts["SURPLUS"] = sum(t.state.name == "FAIL" and bool(t.user_attrs.get("surplus")) for t in trials)
        counts["FAIL"] -= counts["SURPLUS"]
        # a failed trial's parameters are re-queued once: count each finished parameter set once
        counts["params"] = [
            json.dumps(t.params, sort_keys=True) for t in trials if t.state.name in ("COMPLETE", "PRUNED")
        ]
        return counts
    finally:
        storage.engine.dispose()


@dataclass
class KillLog:
    kills: int = 0
    lost_results: int = 0  # half-written folder taken as a result, or a resume that lost finished work
    failed_resumes: int = 0
    details: list = field(default_factory=list)
    states: dict = field(default_factory=dict)  # what each kill left: "old", "new", "absent" (tune: "kept N")


def kill_series(kind: str, base: Path, rng: np.random.Generator, kills: int, log: KillLog) -> None:
    """``kills`` times: start ``pgc KIND``, ``kill -9`` it at a random moment, check the output; then a
    final run must finish. Seeds of the runs are 1, 2, ... so the state tells old from new."""
    out = base / f"{kind}-out"
    first = time.perf_counter()
    argv = kill_argv(kind, out, seed=0, trials=2)
    proc = run_subprocess(argv, base)
    full = time.perf_counter() - first
    if proc.rc != 0:
        log.failed_resumes += 1
        log.details.append(f"{kind}: first run failed: {proc.err.strip()[-300:]}")
        return
    seen = {result_state(kind, out)}
    for i in range(1, kills + 1):
        trials = 2 + i  # tune: every run has trials left to do
        p = subprocess.Popen(
            cli(*kill_argv(kind, out, seed=i, trials=trials)),
            cwd=base,
            env=child_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        time.sleep(float(rng.uniform(0.3, 1.1)) * full)
        p.send_signal(signal.SIGKILL)
        p.wait()
        log.kills += 1
        try:
            state = result_state(kind, out)
            if kind == "tune":
                before = max(s for s in seen if s is not None)
                assert state is not None and state >= before, f"finished trials {before} -> {state}"
                doc = out / "tune.json"
                if doc.exists():
                    json.loads(doc.read_text())
                label = f"{kind}: finished trials kept"
            else:
                assert state is None or state in seen | {i}, f"state {state} after seeds {sorted(seen, key=str)}"
                label = f"{kind}: " + ("absent" if state is None else "new" if state == i else "old")
            log.states[label] = log.states.get(label, 0) + 1
            seen.add(state)
        except Exception as exc:  # noqa: BLE001 - a half-written result: counted, then reported
            log.lost_results += 1
            log.details.append(f"{kind} kill {i}: {type(exc).__name__}: {str(exc)[:200]}")
    final = kills + 2 if kind == "tune" else 99
    done = run_subprocess(kill_argv(kind, out, seed=final, trials=final), base)
    try:
        assert done.rc == 0, done.err.strip()[-300:]
        state = result_state(kind, out)
        if kind == "tune":
            counts = tune_counts(out)
            assert counts["COMPLETE"] + counts["PRUNED"] >= final and counts["RUNNING"] == 0, counts
        else:
            assert state == final
        leftovers = sorted(p.name for p in base.iterdir() if p.name.startswith(out.name + ".pgc-"))
        assert not leftovers, leftovers
    except Exception as exc:  # noqa: BLE001
        log.failed_resumes += 1
        log.details.append(f"{kind} resume: {type(exc).__name__}: {str(exc)[:300]}")


# ---------------------------------------------------------------------------------------------
# concurrent writers
# ---------------------------------------------------------------------------------------------


@dataclass
class WriterLog:
    writers: int = 0
    groups: int = 0
    bad: int = 0
    details: list = field(default_factory=list)


def concurrent_writers(kind: str, base: Path, n: int, log: WriterLog, run: Path | None = None) -> None:
    """``n`` processes write one output (``train``, ``audit`` or ``report``) at once: exactly one
    succeeds, the others exit 2 with one line naming the output."""
    out = base / f"{kind}-shared" / ("a.json" if kind == "audit" else "r")
    if kind == "train":
        argvs = [
            ["train", "--submissions", "400", "--workers", "3", "--no-progress", "--seed", str(i), "--out", str(out)]
            for i in range(n)
        ]
    elif kind == "audit":
        argvs = [
            [
                "audit",
                "--mechanism",
                "laplace",
                "--epsilon",
                "1",
                "--samples",
                "20000",
                "--mechanism-samples",
                "20000",
                "--seed",
                str(i),
                "--no-progress",
                "--out",
                str(out),
            ]
            for i in range(n)
        ]
    else:
        argvs = [["report", str(run), "--title", f"t{i}", "--out", str(out)] for i in range(n)]
    procs = [
        subprocess.Popen(
            cli(*a),
            cwd=base,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        for a in argvs
    ]
    results = _wait_all(procs, SUBPROCESS_TIMEOUT_S)
    log.writers += n
    log.groups += 1
    problems = []
    winners = [i for i, (rc, _) in enumerate(results) if rc == 0]
    if len(winners) != 1:
        problems.append(f"{len(winners)} winners")
    for rc, err in results:
        if rc == 0:
            continue
        lines = [x for x in err.splitlines() if x.strip()]
        if rc != 2 or len(lines) != 1 or str(out) not in lines[0]:
            problems.append(f"loser rc {rc}: {err.strip()[-200:]}")
    if winners and not problems:
        i = winners[0]
        if kind == "train":
            from pgc.a3c.rundir import load_run

            if load_run(out)[0]["trials"][0]["seed"] != i:
                problems.append("the result is not the winner's")
        elif kind == "audit":
            if json.loads(out.read_text())["seed"] != i:
                problems.append("the result is not the winner's")
        elif f"t{i}" not in (out / "report.html").read_text():
            problems.append("the result is not the winner's")
    leftovers = sorted(p.name for p in out.parent.iterdir() if p.name != out.name)
    if leftovers:
        problems.append(f"leftovers {leftovers}")
    if problems:
        log.bad += 1
        log.details.append(f"{kind} x{n}: {'; '.join(problems)}")


def _wait_all(procs, timeout: float) -> list[tuple[int, str]]:
    """(exit code, stderr) of each process; one still running after ``timeout`` is killed ("hang ...")."""
    results = []
    for p in procs:
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            err = "hang " + err
        results.append((p.returncode, err))
    return results


def concurrent_tuners(base: Path, n: int, trials: int, log: WriterLog) -> dict:
    """``n`` ``pgc tune`` workers on one SQLite study at once: the study ends with exactly ``trials``
    finished trials, none RUNNING, failed or surplus, and no parameter set twice."""
    out = base / "tune-shared"
    argvs = [
        ["tune", "--trials", str(trials), *TUNE_ARGS, "--seed", "0", "--worker-id", f"w{i}", "--out", str(out)]
        for i in range(n)
    ]
    procs = [
        subprocess.Popen(
            cli(*a),
            cwd=base,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        for a in argvs
    ]
    results = _wait_all(procs, SUBPROCESS_TIMEOUT_S * 2)
    log.writers += n
    log.groups += 1
    problems = [f"worker rc {rc}: {err.strip()[-300:]}" for rc, err in results if rc != 0]
    counts = tune_counts(out)
    finished = counts["COMPLETE"] + counts["PRUNED"]
    if finished != trials:
        problems.append(f"{finished} finished trials, asked for {trials}")
    if counts["RUNNING"] or counts["FAIL"] or counts["SURPLUS"]:
        problems.append(f"{counts['RUNNING']} RUNNING, {counts['FAIL']} FAIL and {counts['SURPLUS']} surplus trials")
    if len(set(counts["params"])) != len(counts["params"]):
        problems.append("a parameter set was evaluated twice")
    if problems:
        log.bad += 1
        log.details.append(f"tune x{n}: {'; '.join(problems)}")
    return counts


# ---------------------------------------------------------------------------------------------
# one generated case of each family: (outcome, problems); the case folder is removed afterwards
# ---------------------------------------------------------------------------------------------

# what each reader reads: audit --run the summary and θ, attack --run the summary and the transcript
_SUMMARY_DAMAGE = {"summary_json_type", "summary_truncated", "summary_binary", "summary_fifo"}
MUST_REFUSE = {
    "audit": _SUMMARY_DAMAGE | {"checkpoint_garbage", "checkpoint_pickle", "trial_dir_escape"},
    "attack": _SUMMARY_DAMAGE
    | {
        "truncate",
        "nan",
        "inf",
        "object_array",
        "huge_shape",
        "missing_array",
        "symlink_outside",
        "symlink_dev_zero",
        "fifo",
        "folder",
        "empty",
        "trial_dir_escape",
    },
    "report": _SUMMARY_DAMAGE,
}


def _finish(outcome: Outcome, root: Path, extra: list[str]) -> tuple[Outcome, list[str]]:
    found = outcome.problems() + extra
    if (root / "outside" / "precious.txt").read_text() != "precious" or (
        root / "work" / "mine.txt"
    ).read_text() != "mine":
        found.append("a file outside the output folder changed")
    shutil.rmtree(root, ignore_errors=True)
    return outcome, found


def config_case(base: Path, name: str, doc: bytes) -> tuple[Outcome, list[str]]:
    root = make_case_root(base, name)
    (root / "work" / "c.json").write_bytes(doc)
    outcome = run_case(["train", "--config", "c.json", *TINY["train"], "--out", "out"], root)
    extra = ["refused but wrote its output folder"] if outcome.rc == 2 and (root / "work" / "out").exists() else []
    return _finish(outcome, root, extra)


def argv_case(base: Path, name: str, clean_run: Path, argv: list[str]) -> tuple[Outcome, list[str]]:
    root = make_case_root(base, name)
    shutil.copytree(clean_run, root / "work" / "run")
    os.mkfifo(root / "work" / "fifo")
    return _finish(run_case(argv, root), root, [])


def result_case(
    base: Path, name: str, clean_run: Path, reader: str, mutation: tuple, subprocess_: bool = False
) -> tuple[Outcome, list[str]]:
    root = make_case_root(base, name)
    run = root / "work" / "run"
    shutil.copytree(clean_run, run)
    trap = root / "work" / "out-unpickled"  # inside the allowed names: only its existence matters
    mutate_run(run, mutation, trap)
    argv = [a.replace("{run}", "run") for a in RESULT_READERS[reader]]
    outcome = run_case(argv, root, subprocess_=subprocess_)
    extra = []
    if trap.exists():
        extra.append(f"a pickle in a result file was executed ({mutation[0]})")
    if mutation[0] in MUST_REFUSE[reader] and outcome.rc != 2:
        extra.append(f"{mutation[0]} accepted by {reader} (exit code {outcome.rc})")
    return _finish(outcome, root, extra)


def report_document_case(base: Path, name: str, doc: tuple[str, bytes]) -> tuple[Outcome, list[str]]:
    file_name, blob = doc
    root = make_case_root(base, name)
    (root / "work" / "res").mkdir()
    (root / "work" / "res" / file_name).write_bytes(blob)
    return _finish(run_case(["report", f"res/{file_name}", "--out", "out"], root), root, [])
