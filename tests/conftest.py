import numpy as np
import pytest


def _uses_ray(item) -> bool:
    return "ray_engine" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """The tests that use the Ray cluster (``ray_engine``) run first, one after another, then the tests marked
    ``slow``, each group in collection order. pytest-xdist's first worker takes the front of the collection, so one
    worker starts the cluster once and closes it after the last of them (``ray_engine``); and the two workers end on
    short tests instead of one waiting on a long test collected last (the default run's wall time)."""
    items.sort(key=lambda item: (not _uses_ray(item), item.get_closest_marker("slow") is None))


@pytest.fixture
def rng():
    """A fresh seeded generator per test (no global RNG)."""
    return np.random.default_rng(np.random.SeedSequence(20261122))


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL server for the whole session (pgc.tuning.postgres_cluster: installs the Debian
    package if missing, initdb in a temporary folder, a free port); stopped and deleted at the end.
    The PostgreSQL tests always run: a server that cannot start fails them with the reason."""
    from pgc.tuning.postgres_cluster import Cluster

    cluster = Cluster()
    try:
        url = cluster.start()
    except Exception as exc:  # noqa: BLE001 - any reason is reported
        cluster.stop()
        pytest.fail(f"could not start a PostgreSQL server with pgc.tuning.postgres_cluster: {exc}", pytrace=False)
    try:
        yield url
    finally:
        cluster.stop()


_RAY_ENGINE: list = []  # the running local Ray cluster's engine, while one runs


@pytest.fixture
def ray_engine():
    """One local Ray cluster (2 CPUs) shared by the tests that use it: the first of them starts it, and it is closed
    after the last (pytest_runtest_teardown), so Ray's start-up is paid once (they run one after another:
    pytest_collection_modifyitems) and its processes do not run beside the rest of the suite."""
    if not _RAY_ENGINE:
        from pgc.engines import RayEngine

        _RAY_ENGINE.append(RayEngine(num_cpus=2))
    return _RAY_ENGINE[0]


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """Close the Ray cluster once the next test does not use it (or none follows)."""
    if _RAY_ENGINE and (nextitem is None or not _uses_ray(nextitem)):
        _RAY_ENGINE.pop().close()


def pytest_sessionfinish(session, exitstatus):
    while _RAY_ENGINE:  # an interrupted session
        _RAY_ENGINE.pop().close()


def _source_stamp(root) -> str:
    """A hash of what the wheel is built from (the four packages and pyproject.toml)."""
    import hashlib

    digest = hashlib.sha256()
    for name in ("audit", "attacks", "pgc", "reports"):
        for path in sorted((root / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    digest.update((root / "pyproject.toml").read_bytes())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def installed_pgc(tmp_path_factory):
    """The ``pgc`` command of a wheel of this checkout installed (not editable) into a fresh virtual
    environment: ``pip wheel`` without build isolation, then ``pip install --no-index --no-deps`` into a venv
    that reuses this environment's installed dependencies (a ``.pth`` line naming their folder; offline).
    Built once per source state and shared by the pytest-xdist workers (a file lock)."""
    import os
    import subprocess
    import sys
    import sysconfig
    from pathlib import Path

    from filelock import FileLock

    root = Path(__file__).resolve().parent.parent
    shared = tmp_path_factory.getbasetemp().parent  # one folder for every xdist worker of this session
    home = shared / f"wheel-{_source_stamp(root)}"
    pgc = home / "venv" / "bin" / "pgc"
    with FileLock(str(shared / "wheel.lock")):
        if not pgc.exists():
            import shutil

            shutil.rmtree(home, ignore_errors=True)  # what an interrupted test run left half-built
            env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
            run = lambda *argv: subprocess.run(argv, cwd=home, env=env, check=True, capture_output=True)  # noqa: E731
            # built from a copy, so the checkout gets no build/ or egg-info folder
            shutil.copytree(
                root,
                home / "src",
                ignore=shutil.ignore_patterns(
                    ".git", ".venv", "results", "runs", "build", "*.egg-info", "__pycache__", "tests", "docs"
                ),
            )
            run(
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                str(home / "dist"),
                str(home / "src"),
            )
            run(sys.executable, "-m", "venv", "--without-pip", str(home / "venv"))
            purelib = Path(
                subprocess.run(
                    [
                        str(home / "venv" / "bin" / "python"),
                        "-c",
                        "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.strip()
            )
            # this environment's dependencies, behind the venv's own packages (no editable finder: a plain
            # folder on the path processes no .pth file of its own)
            (purelib / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
            wheel = next((home / "dist").glob("pgc_audit-*.whl"))
            run(
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(home / "venv" / "bin" / "python"),
                "install",
                "--no-deps",
                "--no-index",
                str(wheel),
            )
    return pgc


@pytest.fixture
def no_result_parsing(monkeypatch):
    """While the test runs, parsing a record from a dict raises, except a run folder's summary read as a command's
    input (``train`` records, outside :func:`pgc.schemas.dump`): a command that writes a result must write its typed
    result, never a dict parsed back."""
    import sys

    from pgc.schemas import MechanismRecord, TrainRun, TrainTrial, TrialProtection, base

    parse = base.Record.from_dict.__func__
    run_folder = (TrainRun, TrainTrial, TrialProtection, MechanismRecord)

    def written(frame) -> bool:  # a caller on the stack is schemas.dump: a result on its way to a file
        while frame is not None:
            if frame.f_code.co_name == "dump" and frame.f_globals.get("__name__") == "pgc.schemas":
                return True
            frame = frame.f_back
        return False

    def refuse(cls, data, where=""):
        if cls in run_folder and not written(sys._getframe(1)):  # an input file of the command
            return parse(cls, data, where)
        raise AssertionError(f"{cls.__name__} parsed from a dict while the command ran")

    monkeypatch.setattr(base.Record, "from_dict", classmethod(refuse))
    return monkeypatch
