import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh seeded generator per test (no global RNG)."""
    return np.random.default_rng(np.random.SeedSequence(20261122))


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL server for the whole session (scripts/postgres.py: installs the Debian
    package if missing, initdb in a temporary folder, a free port); stopped and deleted at the end.
    The PostgreSQL tests always run: a server that cannot start fails them with the reason."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "postgres.py"
    spec = importlib.util.spec_from_file_location("pgc_scripts_postgres", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cluster = module.Cluster()
    try:
        url = cluster.start()
    except Exception as exc:  # noqa: BLE001 - any reason is reported
        cluster.stop()
        pytest.fail(f"could not start a PostgreSQL server with scripts/postgres.py: {exc}", pytrace=False)
    try:
        yield url
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def ray_engine():
    """One local Ray cluster (2 CPUs) for the session: Ray's start-up is paid once."""
    from engines import RayEngine

    engine = RayEngine(num_cpus=2)
    try:
        yield engine
    finally:
        engine.close()
