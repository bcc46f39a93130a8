"""The oracles by name: ``LIBRARY:PROTOCOL`` with LIBRARY one of ``reference`` (this package's oracles),
``multi-freq-ldpy`` and ``pure-ldp``; names are case-insensitive, and ``mfl`` names multi-freq-ldpy.

A library's module is imported only when one of its protocols is asked for (the libraries are an extra:
``pip install -e '.[ldp]'``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from pgc.errors import UserError

from .direct import GRR, Adaptive, HistogramEncoding, SubsetSelection
from .hadamard import HadamardMechanism, HadamardResponse
from .hashed import FastLocalHashing, LocalHashing, SketchResponse
from .sketches import CountMeanSketch, PrivateCountSketch
from .unary import Rappor, UnaryEncoding

REFERENCE: dict[str, Callable[..., Any]] = {
    "GRR": GRR,
    "SUE": lambda k, epsilon: UnaryEncoding(k, epsilon, optimized=False),
    "OUE": lambda k, epsilon: UnaryEncoding(k, epsilon, optimized=True),
    "SS": SubsetSelection,
    "SHE": lambda k, epsilon: HistogramEncoding(k, epsilon, thresholded=False),
    "THE": lambda k, epsilon: HistogramEncoding(k, epsilon, thresholded=True),
    "BLH": lambda k, epsilon: LocalHashing(k, epsilon, optimized=False),
    "OLH": lambda k, epsilon: LocalHashing(k, epsilon, optimized=True),
    "FLH": FastLocalHashing,
    "ADP": Adaptive,
    "RAPPOR": Rappor,
    "HR": HadamardResponse,
    "HM": HadamardMechanism,
    "CMS": lambda k, epsilon, **kw: CountMeanSketch(k, epsilon, hadamard=False, **kw),
    "HCMS": lambda k, epsilon, **kw: CountMeanSketch(k, epsilon, hadamard=True, **kw),
    "SR": SketchResponse,
    "PCS": PrivateCountSketch,
}

LIBRARY_MODULES = {"multi-freq-ldpy": "pgc.ldp.mfl_clients", "pure-ldp": "pgc.ldp.pure_ldp_sketches"}
# the releases the adapters read (pgc bench versions checks the last three of each: results/versions/)
READABLE = {"multi-freq-ldpy": ">=0.2.3", "pure-ldp": ">=1.1"}  # multi-freq-ldpy's SS: >=0.2.4, THE, SHE: >=0.2.5
ALIASES = {"mfl": "multi-freq-ldpy", "multi_freq_ldpy": "multi-freq-ldpy", "pure_ldp": "pure-ldp", "ours": "reference"}
LIBRARIES = ("reference", *LIBRARY_MODULES)


def library_name(name: str) -> str:
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in LIBRARIES:
        raise UserError(f"unknown LDP library {name!r}; known: {', '.join(LIBRARIES)}")
    return key


def protocols(library: str) -> dict[str, Callable[..., Any]]:
    """Protocol name → factory(k, epsilon, **parameters) of one library (importing it on first use)."""
    library = library_name(library)
    if library == "reference":
        return REFERENCE
    try:
        module = importlib.import_module(LIBRARY_MODULES[library])
    except ImportError as exc:
        from importlib import metadata

        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            raise ImportError(
                f"{library} is not installed: pip install -e '.[ldp]' (scripts/setup.sh installs it): {exc}"
            ) from None
        raise ImportError(  # installed, but laid out otherwise than the releases the adapter reads
            f"{library} {version} is installed, but the adapter cannot read this release ({exc}); it reads "
            f"{library} {READABLE[library]}: pip install '{library}{READABLE[library]}'"
        ) from None
    return module.PROTOCOLS


def parse_spec(spec: str) -> tuple[str, str]:
    """``LIBRARY:PROTOCOL`` → (library, protocol), both checked; a one-line ValueError otherwise."""
    library, sep, protocol = str(spec).partition(":")
    if not sep or not library.strip() or not protocol.strip():
        raise UserError(
            f"--ldp {spec!r}: expected LIBRARY:PROTOCOL, e.g. multi-freq-ldpy:OLH or pure-ldp:DE "
            f"(libraries: {', '.join(LIBRARIES)})"
        )
    library = library_name(library)
    known = protocols(library)
    name = protocol.strip().upper()
    if name not in known:
        raise UserError(f"--ldp {spec!r}: {library} has no protocol {protocol.strip()!r}; it has {', '.join(known)}")
    return library, name


def make_oracle(library: str, protocol: str, k: int, epsilon: float, **parameters):
    """The oracle ``protocol`` of ``library`` at (k, ε) with its extra ``parameters``; ValueError on bad input."""
    library, name = parse_spec(f"{library}:{protocol}")
    try:
        return protocols(library)[name](k, epsilon, **parameters)
    except TypeError as exc:
        raise UserError(
            f"{library}:{name} does not take {', '.join(sorted(parameters)) or 'these settings'}: {exc}"
        ) from None
