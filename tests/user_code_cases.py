"""A new user's walk through "audit my own system", as cases with the outcome each must end in.

Each case writes the user's files into a fresh folder, runs ``pgc ARGV`` there as a child process and checks:
the exit code; that no traceback of pgc-audit's shows (an internal error is planted in one case only, and must
show it); that pgc-audit is never blamed for the user's code ("a bug in pgc-audit"); that an exception raised in
the user's code names the call in its last line and shows only the user's frames; what the case must say; and
that nothing is written where the case expects no result. ``scripts/reliability_run.py`` runs them all and
commits the counts; ``tests/pgc/cli/test_user_code.py`` runs the same checks in-process on a few.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import reliability_gen as gen

REPO = Path(__file__).resolve().parents[1]

FILES = {
    "base.py": '''
        import numpy as np
        from pgc.contracts import PrivacyClaim

        class RandomizedResponse:
            """k-ary randomized response over {0, ..., k-1}: the true value w.p. e^ε/(e^ε+k-1)."""
            name, channels = "randomized-response", ("answer",)

            def __init__(self, epsilon=1.0, k=5, covers=("answer",), wrong_formula=False):
                self.epsilon, self.k, self.claim = epsilon, k, PrivacyClaim(epsilon, 0.0, covers)
                e = np.exp(2 * epsilon if wrong_formula else epsilon)
                self.keep = e / (e + k - 1)

            def release(self, secret, n, rng, *, broadcast=None):
                if secret not in range(self.k):
                    raise ValueError(f"unknown secret {secret!r}")
                other = (secret + rng.integers(1, self.k, n)) % self.k
                return {"answer": np.where(rng.random(n) < self.keep, secret, other).astype(float)[:, None]}

            def canaries(self):
                return {"0 vs 1": (0, 1)}

            def describe_secret(self, secret):
                return f"value {secret}"
    ''',
    "claims.py": """
        import os
        import signal
        import time

        import numpy as np
        from base import RandomizedResponse  # a sibling module

        class Divides(RandomizedResponse):
            def release(self, secret, n, rng, *, broadcast=None):
                return {"answer": np.full((n, 1), 1 / 0)}

        class Strings(RandomizedResponse):
            def release(self, secret, n, rng, *, broadcast=None):
                return {"answer": [["yes"]] * n}

        class WithNan(RandomizedResponse):
            def release(self, secret, n, rng, *, broadcast=None):
                out = super().release(secret, n, rng)["answer"]
                out[::2] = np.nan
                return {"answer": out}

        class SwallowsCtrlC(RandomizedResponse):
            # a library inside the user's release that catches every exception, KeyboardInterrupt included
            def release(self, secret, n, rng, *, broadcast=None):
                try:
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.01)
                except:
                    pass
                return super().release(secret, n, rng)

        class BadDescription(RandomizedResponse):
            def describe_secret(self, secret):
                return {"v": secret}["missing"]

        def make(epsilon=1.0):
            return RandomizedResponse(epsilon)

        def wrong_formula():
            return RandomizedResponse(1.0, wrong_formula=True)

        def typo():
            return RandomizedResponse(1.0, covers=("anser",))

        def the_class():
            return RandomizedResponse

        def needs(epsilon):
            return RandomizedResponse(epsilon)

        def raises():
            raise RuntimeError("cannot build")

        def divides():
            return Divides()

        def strings():
            return Strings()

        def with_nan():
            return WithNan()

        def swallows_ctrl_c():
            return SwallowsCtrlC()

        def bad_description():
            return BadDescription()
    """,
    "broken_import.py": """
        import base
        raise ImportError("the user's module fails while it loads")

        def make():
            return base.RandomizedResponse()
    """,
    "flower_app.py": """
        import numpy as np
        from flwr.app import Context
        from flwr.client import ClientApp, NumPyClient
        from flwr.client.mod import LocalDpMod

        from pgc.flower import DATASET_KEY

        DATA = {"D": np.arange(8.0), "D-replaced": np.arange(8.0) + np.eye(8)[0]}

        class Client(NumPyClient):
            def __init__(self, name):
                self.name = name

            def fit(self, parameters, config):
                return [parameters[0] + 0.1 * DATA[self.name][:4]], 8, {}

        def client_fn(context: Context):
            return Client(context.run_config.get(DATASET_KEY, "D")).to_client()

        def broken_client_fn(context: Context):
            return Client(context.run_config["no such key"]).to_client()

        app = ClientApp(client_fn=client_fn, mods=[LocalDpMod(clipping_norm=1.0, sensitivity=2.0, epsilon=1.0,
                                                               delta=1e-5)])
        broken = ClientApp(client_fn=broken_client_fn, mods=[LocalDpMod(clipping_norm=1.0, sensitivity=2.0,
                                                                         epsilon=1.0, delta=1e-5)])

        def initial_parameters():
            return [np.zeros(4)]

        AUDIT_PAIRS = {"one record replaced": ("D", "D-replaced")}
    """,
}


@dataclass(frozen=True)
class Case:
    """One step of the walk: ``pgc ARGV`` in the user's folder, and what it must end in."""

    name: str
    family: str
    argv: tuple[str, ...]
    rc: int
    says: tuple[str, ...] = ()  # texts stderr (or stdout, for a verdict) must hold
    users_call: str | None = None  # the call an exception in the user's code must name in the last line
    writes: bool = False  # whether a result file is expected
    users_frames: bool = False  # a one-line error that wraps an exception of the user's code, after its frames
    interrupt_after_s: float | None = None  # Ctrl-C this long after the start, or after ``interrupt_when`` shows
    interrupt_when: str | None = None  # a text the command prints once the stage to interrupt has begun
    plant_internal_error: bool = False


def _audit(spec: str, *extra: str, samples: str = "4000") -> tuple[str, ...]:
    return ("audit", "system", spec, "--samples", samples, "--no-progress", "--out", "out/result.json", *extra)


CASES: tuple[Case, ...] = (
    Case(
        "a correct randomized response is consistent",
        "verdict",
        _audit("mine/claims.py:make"),
        0,
        says=("CONSISTENT",),
        writes=True,
    ),
    Case(
        "a wrong formula is violated and --fail-on exits 1",
        "verdict",
        _audit("mine/claims.py:wrong_formula", "--fail-on", "violated"),
        1,
        says=("violated",),
        writes=True,
    ),
    Case(
        "a file imports its sibling module from another folder",
        "sibling import",
        _audit("mine/claims.py:make"),
        0,
        writes=True,
    ),
    Case("a module beside the user imports its sibling", "sibling import", _audit("claims:make"), 0, writes=True),
    Case(
        "the factory raises",
        "user code raises",
        _audit("mine/claims.py:raises"),
        2,
        users_call="mine/claims.py:raises → raises raised RuntimeError: cannot build",
    ),
    Case(
        "release divides by zero",
        "user code raises",
        _audit("mine/claims.py:divides"),
        2,
        users_call="mine/claims.py:divides → Divides.release raised ZeroDivisionError: division by zero",
    ),
    Case(
        "release refuses a secret it does not know",
        "user code raises",
        _audit("mine/claims.py:make", "--secrets", "7", "8"),
        2,
        users_call="mine/claims.py:make → RandomizedResponse.release (mine/base.py) raised ValueError: unknown "
        "secret 7",
    ),
    Case(
        "describe_secret raises KeyError",
        "user code raises",
        _audit("mine/claims.py:bad_description"),
        2,
        users_call="mine/claims.py:bad_description → BadDescription.describe_secret raised KeyError: 'missing'",
    ),
    Case(
        "the user's module raises while it loads",
        "user code raises",
        _audit("mine/broken_import.py:make"),
        2,
        says=('broken_import.py", line 3, in <module>', "loading mine/broken_import.py failed: ImportError"),
        users_frames=True,
    ),
    Case(
        "a Flower client_fn raises KeyError",
        "user code raises",
        (
            "audit",
            "flower",
            "mine/flower_app.py:broken",
            "--samples",
            "500",
            "--no-progress",
            "--out",
            "out/result.json",
        ),
        2,
        users_call="mine/flower_app.py:broken → broken_client_fn raised KeyError: 'no such key'",
    ),
    Case(
        "the factory needs an argument",
        "factory and instance",
        _audit("mine/claims.py:needs"),
        2,
        says=("cannot be called with no settings", "missing a required argument: 'epsilon'"),
    ),
    Case(
        "the factory is given a setting it does not take",
        "factory and instance",
        _audit("mine/claims.py:make", "--setting", "epsilon=1", "--setting", "k=3"),
        2,
        says=("got an unexpected keyword argument 'k'",),
    ),
    Case(
        "the factory returns the class",
        "factory and instance",
        _audit("mine/claims.py:the_class"),
        2,
        says=("RandomizedResponse is a class, not a System",),
    ),
    Case(
        "a claim covers a misspelt channel",
        "typos",
        _audit("mine/claims.py:typo"),
        2,
        says=("'anser' (did you mean 'answer'?) is not one of 'answer'",),
    ),
    Case("a misspelt factory", "typos", _audit("mine/claims.py:mkae"), 2, says=("has no 'mkae'",)),
    Case("a misspelt file", "typos", _audit("mine/claim.py:make"), 2, says=("no file mine/claim.py",)),
    Case(
        "a misspelt option", "typos", ("audit", "--sytem", "mine/claims.py:make"), 2, says=("unrecognized arguments",)
    ),
    Case(
        "--out ending in a separator is a folder",
        "typos",
        ("audit", "system", "mine/claims.py:make", "--samples", "4000", "--no-progress", "--out", "out/"),
        0,
    ),
    Case(
        "--out through a file is refused",
        "typos",
        (
            "audit",
            "system",
            "mine/claims.py:make",
            "--samples",
            "4000",
            "--no-progress",
            "--out",
            "mine/base.py/result.json",
        ),
        2,
        says=("a file is in the way",),
    ),
    Case(
        "a release made of strings",
        "releases",
        _audit("mine/claims.py:strings"),
        2,
        says=("check_releases: channel 'answer' is not numbers (could not convert string to float",),
    ),
    Case(
        "a release holding NaN (absent entries) is audited, not refused as nondeterministic",
        "releases",
        _audit("mine/claims.py:with_nan"),
        0,
        says=("CONSISTENT",),
        writes=True,
    ),
    Case(
        "Ctrl-C during start-up",
        "Ctrl-C",
        _audit("mine/claims.py:make", samples="3000000"),
        130,
        says=("interrupted",),
        interrupt_after_s=0.3,
    ),
    Case(
        "Ctrl-C during the audit",
        "Ctrl-C",
        _audit("mine/claims.py:make", samples="30000000"),
        130,
        says=("interrupted",),
        interrupt_after_s=0.5,
        interrupt_when="auditing randomized-response",
    ),
    Case(
        "Ctrl-C that the user's code swallows",
        "Ctrl-C",
        _audit("mine/claims.py:swallows_ctrl_c"),
        130,
        says=("interrupted",),
    ),
    Case(
        "a bug of pgc-audit's own stays ours",
        "internal error",
        _audit("mine/claims.py:make"),
        3,
        says=("Traceback (most recent call last)", "this is a bug in pgc-audit"),
        plant_internal_error=True,
    ),
)

# a child that runs pgc with one of pgc-audit's own functions broken (a TypeError raised in its own frame)
_PLANTED = (
    "import sys; import pgc.cli.commands.audit.system as s; s._claim_text = None; "
    "from pgc.cli import entry; sys.argv[0] = 'pgc'; entry()"
)


@dataclass
class CaseResult:
    case: Case
    rc: int | None
    err: str
    problems: list[str] = field(default_factory=list)


def lay_out(folder: Path) -> None:
    """The user's files: ``folder/mine/*.py`` and a copy of ``claims.py``/``base.py`` in ``folder`` itself (for the
    module form), and the output folder's parent."""
    (folder / "mine").mkdir(parents=True)
    for name, text in FILES.items():
        (folder / "mine" / name).write_text(textwrap.dedent(text))
    for name in ("base.py", "claims.py"):
        (folder / name).write_text(textwrap.dedent(FILES[name]))


def _as_in_a_terminal() -> None:
    """The child's Ctrl-C as a terminal delivers it: a test run started in the background of a non-interactive shell
    ignores SIGINT, and an ignored signal stays ignored across exec (Python then installs no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_case(case: Case, folder: Path, timeout: float = 180.0) -> CaseResult:
    lay_out(folder)
    command = (
        [sys.executable, "-c", _PLANTED, *case.argv]
        if case.plant_internal_error
        else [sys.executable, "-m", "pgc.cli", *case.argv]
    )
    proc = subprocess.Popen(
        command,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=gen.child_env(),
        stdin=subprocess.DEVNULL,
        preexec_fn=_as_in_a_terminal,
    )
    shown = ""
    if case.interrupt_when is not None:  # wait for the stage to begin (its line is flushed), then interrupt it
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        while case.interrupt_when not in shown and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            shown += line
    if case.interrupt_after_s is not None:
        time.sleep(case.interrupt_after_s)
        proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=timeout)
        out = shown + out
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return CaseResult(case, None, err, ["hang"])
    return CaseResult(case, proc.returncode, err, judge(case, proc.returncode, out, err, folder))


def judge(case: Case, rc: int, out: str, err: str, folder: Path) -> list[str]:
    """What is wrong with one case's outcome (empty: as it must be)."""
    problems = []
    if rc != case.rc:
        problems.append(f"wrong outcome: exit code {rc}, expected {case.rc}")
    if "Traceback (most recent call last)" in err and not case.plant_internal_error:
        problems.append("traceback")
    if "bug in pgc-audit" in err and not case.plant_internal_error:
        problems.append("blames pgc-audit")
    lines = [line for line in err.splitlines() if line.strip()]
    if case.users_call is not None:
        if not lines or lines[-1] != f"pgc audit: error in your code: {case.users_call}":
            problems.append(f"wrong outcome: the last line does not name the call: {lines[-1:]}")
        if str(REPO) in err:
            problems.append("wrong outcome: pgc-audit's frames shown for the user's code")
    elif case.users_frames:
        if not (lines and lines[0].startswith("in your code") and lines[-1].startswith("pgc audit: error: ")):
            problems.append("wrong outcome: not the user's frames and one error line")
    elif rc == 2 and (len(lines) != 1 or "error:" not in lines[0]):
        problems.append("wrong outcome: not a one-line error")
    for text in case.says:
        if text not in out + err:
            problems.append(f"wrong outcome: does not say {text!r}")
    wrote = (folder / "out" / "result.json").exists() or any((folder / "out").glob("*.json"))
    if wrote != (case.writes or (case.rc == 0)):
        problems.append(f"wrong outcome: result {'written' if wrote else 'missing'}")
    return problems
