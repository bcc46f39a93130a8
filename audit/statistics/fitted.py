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
WITNESS_MODULES = ("audit.statistics.scores", "audit.statistics.fitted_scores", "audit.statistics.trees")


class FittedScore:
    """A fitted score that can be saved and rebuilt (module docstring). Subclasses set ``KIND`` and define
    ``parameters()`` and ``__call__(y)`` (the score of each release, a row of ``y``)."""

    KIND: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.KIND:
            REGISTRY[cls.KIND] = cls

    def parameters(self) -> dict[str, Any]:
        raise NotImplementedError

    def __call__(self, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def witness_of(scorer: Any) -> dict[str, Any] | None:
    """The JSON witness of a fitted score (None: a score of a statistic that cannot be saved, or one holding such a
    score: a calibrated channel of a statistic a system offers)."""
    if not isinstance(scorer, FittedScore):
        return None
    try:
        return _encoded_score(scorer)
    except TypeError:
        return None


def _encoded_score(score: FittedScore) -> dict[str, Any]:
    return {"kind": score.KIND, "parameters": {k: _encoded(v) for k, v in score.parameters().items()}}


def _encoded(value: Any) -> dict[str, Any]:
    if isinstance(value, FittedScore):
        return {"score": _encoded_score(value)}
    if isinstance(value, (list, tuple)):
        return {"items": [_encoded(v) for v in value]}
    if value is None or isinstance(value, (bool, str)):
        return {"value": value}
    if isinstance(value, int) and not isinstance(value, np.integer):
        return {"value": value}
    array = np.asarray(value)
    if array.ndim == 0 and array.dtype.kind == "f" and np.isfinite(array):
        return {"number": float(array)}  # JSON writes a float's shortest repr, which reads back to the same bits
    if array.dtype.kind not in ARRAY_KINDS:
        raise TypeError(f"a fitted parameter of dtype {array.dtype} cannot be saved")
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    data = base64.b64encode(np.ascontiguousarray(little).tobytes()).decode("ascii")
    return {"dtype": little.dtype.str, "shape": list(array.shape), "base64": data}


def scorer_from_witness(witness: Any, where: str = "witness") -> FittedScore:
    """The fitted score a witness describes (a :class:`~pgc.errors.UserError` naming ``where`` for anything that is
    not one)."""
    _load_kinds()
    if not isinstance(witness, dict) or not isinstance(witness.get("parameters"), dict):
        raise UserError(f"{where}: not a saved fitted score")
    cls = REGISTRY.get(str(witness.get("kind")))
    if cls is None:
        raise UserError(f"{where}: unknown fitted score kind {witness.get('kind')!r}")
    parameters = {str(k): _decoded(v, f"{where}.{k}") for k, v in witness["parameters"].items()}
    try:
        return cls(**parameters)
    except (TypeError, ValueError, IndexError) as exc:
        raise UserError(f"{where}: a {cls.KIND} score cannot be built from these parameters ({exc})") from None


def _decoded(value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise UserError(f"{where}: not a saved parameter")
    if "score" in value:
        return scorer_from_witness(value["score"], where)
    if "items" in value and isinstance(value["items"], list):
        return [_decoded(v, f"{where}[{i}]") for i, v in enumerate(value["items"])]
    if "value" in value:
        return value["value"]
    if "number" in value:
        if isinstance(value["number"], bool) or not isinstance(value["number"], (int, float)):
            raise UserError(f"{where}: not a number")
        return float(value["number"])
    try:
        dtype = np.dtype(str(value["dtype"]))
        shape = tuple(int(s) for s in value["shape"])
        data = base64.b64decode(str(value["base64"]), validate=True)
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise UserError(f"{where}: not a saved array ({exc})") from None
    if dtype.kind not in ARRAY_KINDS or any(s < 0 for s in shape) or len(data) != dtype.itemsize * math.prod(shape):
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
