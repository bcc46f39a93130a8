"""The project's systems by name, and the loader behind ``pgc audit --system SPEC``.

A SPEC is one of three things, tried in this order and named in the error when none works:

1. a registered name (``pgc-a3c``): a key of :data:`SYSTEMS`;
2. ``path/to/file.py:factory``: the file is loaded as a module (no package needed), with its own folder first
   on the import path, as ``python path/to/file.py`` has it, so it imports the modules beside it;
3. ``module:factory``: imported with the current folder on the import path, so a module beside the
   user (``mysys.py`` → ``mysys:make``) works as well as an installed one (``pgc.gympg.system:pendulum_system``).

The registry holds ``"module:factory"`` strings, imported only when a system is asked for: this module
imports no system package. A module a user's SPEC names is recorded as the user's code
(:func:`pgc.usercode.note_user_module`), so an exception raised in it is reported as theirs.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pgc.errors import UserError
from pgc.usercode import OUR_PACKAGES, note_user_module

# name → "module:factory"; every entry runs the shared System contract suite (tests/audit/test_system_contract.py)
SYSTEMS: dict[str, str] = {
    "pgc-a3c": "pgc.a3c.system:pgc_a3c_system",
    "pgc-a3c-gaussian": "pgc.a3c.system:pgc_a3c_gaussian_system",
    "pendulum-gaussian-pg": "pgc.gympg.system:pendulum_system",
    "fedlinucb": "pgc.fedlinucb.systems:fedlinucb_system",
    "private-fedlinucb": "pgc.fedlinucb.systems:private_fedlinucb_system",
    "dp20-feducb": "pgc.fedlinucb.systems:dp20_system",
    "toy-gaussian-vector": "pgc.toysystems.systems:gaussian_vector_system",
    "toy-gaussian-miscalibrated": "pgc.toysystems.systems:miscalibrated_gaussian_system",
    "toy-gaussian-miscalibrated-no-curve": "pgc.toysystems.systems:miscalibrated_gaussian_system_without_curve",
    "toy-batched-sum": "pgc.toysystems.systems:batched_sum_system",
    "toy-laplace-count": "pgc.toysystems.systems:laplace_count_system",
    "toy-dpsgd-poisson": "pgc.toysystems.dpsgd:dp_sgd_system",
    "toy-dpsgd-shuffle": "pgc.toysystems.dpsgd:dp_sgd_shuffle_system",
    "toy-grr": "pgc.toysystems.frequency:randomized_response_system",
    "toy-oue": "pgc.toysystems.frequency:unary_encoding_system",
    "toy-hashed-report": "pgc.toysystems.frequency:hashed_report_system",
    "dprl-advising": "pgc.dprl.advising:system",
    "dprl-planning": "pgc.dprl.planning:system",
    "dprl-dpdrl": "pgc.dprl.dpdrl:system",
    "dprl-oneparam": "pgc.dprl.oneparam:system",
    "flower-localdp": "pgc.flower.system:local_dp_update_system",
    "flower-localdp-sensitivity-c": "pgc.flower.system:local_dp_sensitivity_c_system",
    "ldp-reference": "pgc.ldp.system:reference_system",
    "ldp-multi-freq-ldpy": "pgc.ldp.system:multi_freq_ldpy_system",
    "ldp-pure-ldp": "pgc.ldp.system:pure_ldp_system",
    "nvflare-svt": "pgc.nvflare.system:svt_privacy_system",
    "nvflare-percentile": "pgc.nvflare.system:percentile_privacy_system",
    "nvflare-exclude-vars": "pgc.nvflare.system:exclude_vars_system",
}


class SystemSpecError(UserError):
    """A ``--system`` SPEC that names no usable system factory; the message says which reading failed."""


def register_system(name: str, target: str) -> None:
    """Make ``target`` (``"module:factory"``) available as ``name``."""
    if not name or name in SYSTEMS:
        raise UserError(f"system name {name!r} is empty or already registered")
    if ":" not in target:
        raise UserError(f"a registered system is 'module:factory', got {target!r}")
    SYSTEMS[name] = target


def _from_file(path: Path, factory_name: str, option: str = "system") -> Callable[..., Any]:
    if not path.is_file():
        raise SystemSpecError(f"{option} {path}:{factory_name}: no file {path}")
    module_name = f"_pgc_user_system_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SystemSpecError(f"{option} {path}:{factory_name}: {path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # as `python file.py` has it: the file's folder first, for the modules beside it
        sys.path.insert(0, folder)
    sys.modules[module_name] = module
    note_user_module(module, f"{path}:{factory_name}")
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's module raised: the CLI shows the user's frames of the cause
        sys.modules.pop(module_name, None)
        raise SystemSpecError(
            f"{option} {path}:{factory_name}: loading {path} failed: {type(exc).__name__}: {exc}"
        ) from exc
    return _attribute(module, factory_name, f"{path}:{factory_name}", option)


def _from_module(module_name: str, factory_name: str, option: str = "system") -> Callable[..., Any]:
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and _is_prefix(exc.name, module_name):
            raise SystemSpecError(
                f"{option} {module_name}:{factory_name}: no module {module_name!r} is installed or "
                f"in {cwd}; give "
                + (f"a registered name ({', '.join(sorted(SYSTEMS))}), " if option == "system" else "")
                + "MODULE:FACTORY or path/to/file.py:FACTORY"
            ) from exc
        raise SystemSpecError(
            f"{option} {module_name}:{factory_name}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    except Exception as exc:  # the user's module raised: the CLI shows the user's frames of the cause
        raise SystemSpecError(
            f"{option} {module_name}:{factory_name}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if added:
            sys.path.remove(cwd)
    if module_name.split(".")[0] not in OUR_PACKAGES:
        note_user_module(module, f"{module_name}:{factory_name}")
    return _attribute(module, factory_name, f"{module_name}:{factory_name}", option)


def _is_prefix(missing: str, module_name: str) -> bool:
    """Whether the module Python could not find is ``module_name`` or a package on its way."""
    return module_name == missing or module_name.startswith(missing + ".")


def _attribute(module: Any, factory_name: str, spec: str, option: str = "system") -> Callable[..., Any]:
    if not factory_name.isidentifier():
        raise SystemSpecError(f"{option} {spec}: {factory_name!r} is not a Python name")
    factory = getattr(module, factory_name, None)
    if factory is None:
        raise SystemSpecError(f"{option} {spec}: the module has no {factory_name!r}")
    if not callable(factory):
        raise SystemSpecError(f"{option} {spec}: {factory_name!r} is not callable")
    return factory


def system_factory(spec: str, option: str = "system") -> Callable[..., Any]:
    """The factory a SPEC names (see the module docstring); :class:`SystemSpecError` says which reading failed,
    naming the pgc audit subcommand the SPEC was given to (``system``, ``flower``, ``nvflare``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise SystemSpecError(f"{option} needs a registered name, MODULE:FACTORY or path/to/file.py:FACTORY")
    spec = spec.strip()
    if spec in SYSTEMS:
        module_name, _, factory_name = SYSTEMS[spec].partition(":")
        return _from_module(module_name, factory_name, option)
    target, sep, factory_name = spec.rpartition(":")
    if not sep and spec.endswith(".py"):
        raise SystemSpecError(f"{option} {spec}: name the factory in the file too, as {spec}:FACTORY")
    if not sep or not target or not factory_name:
        if option != "system":  # the registered names are systems
            raise SystemSpecError(f"{option} {spec!r}: not MODULE:NAME or path/to/file.py:NAME")
        near = difflib.get_close_matches(spec, list(SYSTEMS), 1)
        raise SystemSpecError(
            (f"{option} {spec!r}: did you mean {near[0]}? " if near else f"{option} {spec!r}: ")
            + f"not a registered name ({', '.join(sorted(SYSTEMS))}), and not "
            "MODULE:FACTORY or path/to/file.py:FACTORY"
        )
    if target.endswith(".py") or os.sep in target or "/" in target:
        return _from_file(Path(target), factory_name, option)
    return _from_module(target, factory_name, option)


def spec_module(spec: str) -> Any:
    """The module a SPEC loaded (after :func:`system_factory`), for the attributes a user's file states beside its
    factory."""
    spec = spec.strip()
    target = SYSTEMS[spec].partition(":")[0] if spec in SYSTEMS else spec.rpartition(":")[0]
    if target.endswith(".py") or os.sep in target or "/" in target:
        return sys.modules[f"_pgc_user_system_{Path(target).stem}"]
    return sys.modules[target]


def check_settings(factory: Callable[..., Any], settings: dict[str, Any], spec: str) -> None:
    """Refuse, in one line, settings the factory's signature does not take (before calling it, so that a
    TypeError raised inside the factory stays the factory's own)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to check
        return
    try:
        signature.bind(**settings)
    except TypeError as exc:
        given = ", ".join(f"{k}={v!r}" for k, v in settings.items()) or "no settings"
        raise SystemSpecError(
            f"{spec} cannot be called with {given}: {exc} (give --setting KEY=VALUE; "
            f"its signature is {getattr(factory, '__name__', 'factory')}{signature})"
        ) from None


def make_system(spec: str, **settings: Any) -> Any:
    """The system a SPEC names, built with ``settings``."""
    factory = system_factory(spec)
    check_settings(factory, settings, f"system {spec.strip()}")
    return factory(**settings)
