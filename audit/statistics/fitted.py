"""Fitted scores as data: the witness a certified row saves of its statistic.

A score that can be saved is a :class:`FittedScore`: its ``KIND`` names it, and ``parameters()`` returns everything
it was fitted to — numpy arrays, numbers, strings, nested fitted scores and lists of them — under the names its
constructor takes, so that ``cls(**parameters())`` rebuilds the same score. :func:`witness_of` writes one as a JSON
object: a finite float as a JSON number (its shortest repr, which reads back to the same bits), an array as its
dtype, shape and little-endian bytes in base64 (exact to the last bit, and read back by :func:`numpy.frombuffer`:
loading a witness never executes anything from it); :func:`scorer_from_witness` rebuilds the
score, and :func:`same_witness` says whether two fits are the same to the last bit. A score fitted by a statistic a
system or a user brings has no witness (None): its code is theirs.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any, ClassVar

import numpy as np

from pgc.errors import UserError

REGISTRY: dict[str, type[FittedScore]] = {}  # KIND → class, filled as the classes are defined
ARRAY_KINDS = "biuf"  # booleans, signed and unsigned integers, floats: what a fitted parameter holds
WITNESS_MODULES = (
    "audit.statistics.scores",
    "audit.statistics.fitted_scores",
    "audit.statistics.trees",
    "audit.statistics.learned",
)
MAX_NESTING = 8  # fitted scores inside fitted scores, at most (the deepest the statistics build is 3)
MAX_DIMENSIONS = 2  # a fitted parameter is a number, a vector or a matrix
# what a spec's letter admits: float64; non-negative integers (column and node indices); 64-bit hashes; booleans
SPEC_DTYPES = {"f": ("f",), "i": ("i", "u"), "u": ("u",), "b": ("b",)}


class FittedScore:
    """A fitted score that can be saved and rebuilt (module docstring). Subclasses in :data:`WITNESS_MODULES` set
    ``KIND`` and define ``parameters()`` and ``__call__(y)`` (the score of each release, a row of ``y``);
    ``ARRAYS`` states each array parameter's dtype and shape as a rebuilt witness must hold it — a letter of
    :data:`SPEC_DTYPES`, then ``:`` and one symbol per dimension (the same symbol: the same length), ``?`` first
    where None is allowed — and ``check(parameters)`` any further invariant; both are read before a witness is
    built, so a malformed one is refused in one line instead of allocating or looping without end. A subclass
    elsewhere (a system's own) is not registered and has no witness."""

    KIND: ClassVar[str] = ""
    ARRAYS: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "KIND" in cls.__dict__ and cls.__module__ in WITNESS_MODULES:
            if cls.KIND in REGISTRY:
                raise TypeError(f"fitted score kind {cls.KIND!r} is defined twice")
            REGISTRY[cls.KIND] = cls

    @classmethod
    def check(cls, parameters: dict[str, Any]) -> str | None:
        """What is wrong with rebuilt ``parameters`` beyond their ``ARRAYS`` specs (None: nothing)."""
        return None

    def parameters(self) -> dict[str, Any]:
        raise NotImplementedError

    def __call__(self, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def witness_of(scorer: Any) -> dict[str, Any] | None:
    """The JSON witness of a fitted score (None: a score of a statistic that cannot be saved, or one holding such a
    score: a calibrated channel of a statistic a system offers, a subclass of a fitted score a system defines)."""
    try:
        return _encoded_score(scorer)
    except TypeError:
        return None


def _encoded_score(score: Any) -> dict[str, Any]:
    if not isinstance(score, FittedScore) or REGISTRY.get(score.KIND) is not type(score):
        raise TypeError(f"{type(score).__name__} is not a fitted score of the audit's own")
    return {"kind": score.KIND, "parameters": {k: _encoded(v) for k, v in score.parameters().items()}}


def _encoded(value: Any) -> dict[str, Any]:
    if isinstance(value, FittedScore):
        return {"score": _encoded_score(value)}
    if type(value) in (list, tuple):
        return {"items": [_encoded(v) for v in value]}
    if value is None or type(value) in (bool, str, int):
        return {"value": value}
    array = np.asarray(value)
    if array.ndim == 0 and array.dtype.kind == "f" and np.isfinite(array):
        return {"number": float(array)}  # JSON writes a float's shortest repr, which reads back to the same bits
    if array.dtype.kind not in ARRAY_KINDS:
        raise TypeError(f"a fitted parameter of dtype {array.dtype} cannot be saved")
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    data = base64.b64encode(np.ascontiguousarray(little).tobytes()).decode("ascii")
    return {"dtype": little.dtype.str, "shape": list(array.shape), "base64": data}


def scorer_from_witness(witness: Any, where: str = "witness", depth: int = 0) -> FittedScore:
    """The fitted score a witness describes (a :class:`~pgc.errors.UserError` naming ``where`` for anything that is
    not one)."""
    _load_kinds()
    if depth > MAX_NESTING:
        raise UserError(f"{where}: fitted scores nested more than {MAX_NESTING} deep")
    if not isinstance(witness, dict) or not isinstance(witness.get("parameters"), dict):
        raise UserError(f"{where}: not a saved fitted score")
    cls = REGISTRY.get(str(witness.get("kind")))
    if cls is None:
        raise UserError(f"{where}: unknown fitted score kind {witness.get('kind')!r}")
    parameters = {str(k): _decoded(v, f"{where}.{k}", depth) for k, v in witness["parameters"].items()}
    problem = _spec_problem(cls, parameters) or cls.check(parameters)
    if problem:
        raise UserError(f"{where}: a {cls.KIND} score cannot be built from these parameters ({problem})")
    try:
        return cls(**parameters)
    except (TypeError, ValueError, IndexError, OverflowError, AttributeError) as exc:
        raise UserError(f"{where}: a {cls.KIND} score cannot be built from these parameters ({exc})") from None


def _spec_problem(cls: type[FittedScore], parameters: dict[str, Any]) -> str | None:
    """What breaks ``cls.ARRAYS`` in ``parameters`` (None: nothing)."""
    lengths: dict[str, int] = {}
    for name, spec in cls.ARRAYS.items():
        value = parameters.get(name)
        if value is None and spec.startswith("?"):
            continue
        letter, _, symbols = spec.lstrip("?").partition(":")
        dims = [d for d in symbols.split(",") if d]
        if not isinstance(value, np.ndarray) or value.dtype.kind not in SPEC_DTYPES[letter] or value.ndim != len(dims):
            return f"{name} must be a {len(dims)}-dimensional array of kind {letter!r}"
        if letter == "f" and value.dtype.itemsize != 8:
            return f"{name} must hold float64"
        if letter == "i" and value.size and int(value.min()) < 0:
            return f"{name} holds a negative index"
        for symbol, size in zip(dims, value.shape, strict=True):
            if lengths.setdefault(symbol, size) != size:
                return f"{name} has {size} entries where another parameter has {lengths[symbol]}"
    return None


def _decoded(value: Any, where: str, depth: int) -> Any:
    if not isinstance(value, dict):
        raise UserError(f"{where}: not a saved parameter")
    if "score" in value:
        return scorer_from_witness(value["score"], where, depth + 1)
    if "items" in value and isinstance(value["items"], list):
        if depth > MAX_NESTING:
            raise UserError(f"{where}: lists nested more than {MAX_NESTING} deep")
        return [_decoded(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value["items"])]
    if "value" in value:
        return value["value"]
    if "number" in value:
        number = value["number"]
        try:
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(float(number)):
                raise OverflowError
        except OverflowError:
            raise UserError(f"{where}: not a finite number") from None
        return float(number)
    try:
        dtype = np.dtype(str(value["dtype"]))
        shape = tuple(int(s) for s in value["shape"])
        data = base64.b64decode(str(value["base64"]), validate=True)
    except (KeyError, TypeError, ValueError, OverflowError, binascii.Error) as exc:
        raise UserError(f"{where}: not a saved array ({exc})") from None
    if dtype.kind not in ARRAY_KINDS or len(shape) > MAX_DIMENSIONS or any(s < 0 for s in shape):
        raise UserError(f"{where}: not a saved array (dtype {dtype}, shape {shape})")
    if len(data) != dtype.itemsize * math.prod(shape):
        raise UserError(f"{where}: an array of {dtype} and shape {shape} does not fit its {len(data)} bytes")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def same_witness(first: dict[str, Any] | None, second: dict[str, Any] | None) -> bool:
    """Whether two witnesses are the same fit, bit for bit (their kinds, arrays and values all equal)."""
    return first is not None and first == second


def _load_kinds() -> None:
    """Imports the modules that define fitted scores, so that every KIND is registered before one is looked up."""
    import importlib

    for name in WITNESS_MODULES:
        importlib.import_module(name)
