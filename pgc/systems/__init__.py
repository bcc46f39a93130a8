"""The systems layer: the contract every audited system meets (:mod:`pgc.contracts`) and the
registry of the project's systems by name (:mod:`pgc.systems.registry`)."""

from pgc.contracts import ALL, PrivacyClaim, System

from .registry import SYSTEMS, SystemSpecError, make_system, register_system, system_factory

__all__ = [
    "ALL",
    "PrivacyClaim",
    "System",
    "SYSTEMS",
    "SystemSpecError",
    "make_system",
    "register_system",
    "system_factory",
]
