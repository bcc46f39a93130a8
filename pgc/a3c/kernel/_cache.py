"""numba's cache for this package, keyed on the package's sources as a whole.

numba keys a cached function on its own source file, but a function of this package inlines helpers
from the other modules (physics, network, mechanism twins) and compiles in the constants of
:mod:`pgc.a3c.kernel.layout` and of the core modules it reads: an edit there would leave a stale copy in
the cache. :func:`install` makes every cached function defined under ``pgc/a3c/kernel/`` carry the hash
of all those files instead, so any edit recompiles, and writes the cache to the user's cache folder
(``NUMBA_CACHE_DIR`` when set), not beside the installed package, in a folder named by that hash rather than by
the sources' location: every copy of the same sources (a checkout, an installed wheel, another virtual
environment) shares one compiled cache. It uses numba's cache locator classes (not a
public API); where they are missing it does nothing and the per-file key applies.
"""

from __future__ import annotations

import hashlib
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_CORE = os.path.dirname(_HERE)
# the cache goes to NUMBA_CACHE_DIR when set, else to the user's cache folder (numba's user-wide locator:
# ~/.cache/numba on Linux), never beside the installed sources
USER_CACHE_FIRST = {
    "UserProvidedCacheLocator": 0,
    "_UserProvidedCacheLocator": 0,
    "UserWideCacheLocator": 1,
    "_UserWideCacheLocator": 1,
}
SOURCES_OUTSIDE = ("env.py", "mechanism_codes.py", "model.py")  # pgc modules whose constants are compiled in


def source_files() -> list[str]:
    own = sorted(os.path.join(_HERE, f) for f in os.listdir(_HERE) if f.endswith(".py"))
    return own + [os.path.join(_CORE, f) for f in SOURCES_OUTSIDE]


def package_stamp() -> bytes:
    """SHA-256 of every source file the compiled functions depend on."""
    digest = hashlib.sha256()
    for path in source_files():
        with open(path, "rb") as f:
            digest.update(os.path.basename(path).encode() + b"\0" + f.read())
    return digest.digest()


class _PackageStamped:
    """A numba locator keyed on the package's sources as a whole, its folder named by their hash."""

    def get_source_stamp(self):
        return package_stamp()

    def get_cache_path(self):
        return os.path.join(os.path.dirname(super().get_cache_path()), "pgc-a3c-kernel-" + package_stamp().hex()[:32])


def install() -> bool:
    """Register the package-wide key with numba's cache; False where numba offers no way to."""
    try:
        from numba.core import caching
    except ImportError:
        return False
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    bases = list(getattr(impl, "_locator_classes", []))
    if not bases or any(getattr(cls, "pgc_package_locator", False) for cls in bases):
        return bool(bases)
    stamped = {base: type(f"PackageStamped{base.__name__}", (_PackageStamped, base), {}) for base in bases}
    order = sorted(bases, key=lambda cls: USER_CACHE_FIRST.get(cls.__name__, len(USER_CACHE_FIRST)))

    class PackageLocator:
        pgc_package_locator = True

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.dirname(os.path.abspath(py_file)) != _HERE:
                return None
            for base in order:
                locator = base.from_function(py_func, py_file)
                if locator is not None:
                    locator.__class__ = stamped[base]
                    try:
                        locator.ensure_cache_path()
                    except OSError:  # the shared folder cannot be written: numba compiles without a cache
                        return None
                    return locator
            return None

    impl._locator_classes = [PackageLocator, *bases]
    return True
