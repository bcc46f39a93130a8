"""The typed-record machinery every result schema is built from.

A schema is a frozen dataclass whose field annotations say what a JSON value must be; ``from_dict``
checks and converts one JSON object field by field (a wrong type is a one-line :class:`SchemaError`
naming the field), ``to_dict`` writes it back. Fields with a default are optional; keys a schema does
not name are kept in ``extra`` and written back unchanged, so a writer can add a field without
breaking a reader. Infinite floats travel as the strings "inf"/"-inf" (JSON has no infinity).

Pure Python: this module imports nothing from the project and nothing outside the standard library.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import types
import typing
from typing import TYPE_CHECKING, Any, ClassVar, Literal, SupportsInt, TypeAlias, TypeVar

from pgc.errors import UserError
from pgc.files import json_number

# A JSON object whose values the schema leaves unchecked. The type checker reads it as ``dict[str, Any]``;
# at run time it is the plain ``dict`` annotation, which :meth:`Record.from_dict` keeps as it is (a
# parametrised ``dict[str, Any]`` would be copied key by key).
if TYPE_CHECKING:
    JsonObject: TypeAlias = dict[str, Any]
else:
    JsonObject = dict

_R = TypeVar("_R", bound="Record")


class SchemaError(UserError):
    """A JSON value that does not match its schema (one line, naming the kind and the field)."""


def number(value: Any) -> float | None:
    """A JSON number or one of the strings "inf", "-inf", "nan" as float; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "+inf", "infinity"):
            return math.inf
        if text in ("-inf", "-infinity"):
            return -math.inf
        if text == "nan":
            return math.nan
        try:
            return float(text)
        except ValueError:
            return None
    return None


def json_ready(obj: Any) -> Any:
    """A copy JSON can write: records as their dicts (:meth:`Record.to_dict`), other dataclasses as their set
    fields, enums as their values, numpy arrays and scalars as Python values, non-finite floats as
    "inf"/"-inf"/"nan", tuples as lists, keys as strings."""
    if isinstance(obj, Record):
        return obj.to_dict()
    if isinstance(obj, enum.Enum):
        return obj.value
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        values = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        return {k: json_ready(v) for k, v in values.items() if v is not None}
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):
        return json_ready(obj.tolist())
    if isinstance(obj, float):
        return json_number(obj)
    return obj


def _sequence(value: Any) -> list[Any] | None:
    if isinstance(value, (list, tuple)):
        return list(value)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy arrays from a writer
        out = value.tolist()
        return out if isinstance(out, list) else None
    return None


_TYPE_HINTS: dict[type, dict[str, Any]] = {}  # per class, resolved on first use


def type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, resolved once per class (resolving the annotations' strings costs more than
    parsing a record's values)."""
    if cls not in _TYPE_HINTS:
        _TYPE_HINTS[cls] = typing.get_type_hints(cls)
    return _TYPE_HINTS[cls]


def _convert(tp: Any, value: Any, where: str) -> Any:
    """``value`` checked against the annotation ``tp`` and converted (ints and strings to float, records
    to dataclasses); raises SchemaError naming ``where``."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, where)
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(errors[0] if len(errors) == 1 else f"{where}: {_show(value)} matches none of {tp}")
    if (isinstance(tp, type) and issubclass(tp, enum.Enum)) or origin is Literal:
        return _convert_choice(tp, value, where)
    if origin in (list, dict, tuple):
        return _convert_container(origin, tp, value, where)
    if isinstance(tp, type) and issubclass(tp, Record):
        if not isinstance(value, dict):
            raise SchemaError(f"{where} is {_show(value)}, expected an object")
        return tp.from_dict(value, where)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _plain_dataclass(tp, value, where)
    return _convert_scalar(tp, value, where)


def _convert_scalar(tp: Any, value: Any, where: str) -> Any:
    """A JSON scalar (number, integer, boolean, string) or an unchecked object or list, checked against ``tp``."""
    if tp is float:
        x = number(value)
        if x is None or (isinstance(value, str) and x is not None and math.isfinite(x)):
            raise SchemaError(f"{where} is {_show(value)}, expected a number")
        return x
    if tp is int:
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or float(value) != int(typing.cast(SupportsInt, value))
        ):
            raise SchemaError(f"{where} is {_show(value)}, expected an integer")
        return int(typing.cast(SupportsInt, value))
    if tp is bool:
        if not isinstance(value, bool) and type(value).__name__ != "bool_":
            raise SchemaError(f"{where} is {_show(value)}, expected true or false")
        return bool(value)
    if tp is str:
        if not isinstance(value, str):
            raise SchemaError(f"{where} is {_show(value)}, expected a string")
        return value
    if tp is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{where} is {_show(value)}, expected an object")
        return value
    if tp is list:
        items = _sequence(value)
        if items is None:
            raise SchemaError(f"{where} is {_show(value)}, expected a list")
        return items
    raise TypeError(f"schema annotation {tp!r} at {where} is not supported")


def _convert_choice(tp: Any, value: Any, where: str) -> Any:
    """A value of an Enum (converted to its member) or of a ``Literal[...]`` annotation."""
    choices = (
        [m.value for m in typing.cast("type[enum.Enum]", tp)] if isinstance(tp, type) else list(typing.get_args(tp))
    )
    if value not in choices:
        raise SchemaError(f"{where} is {_show(value)}, expected one of {', '.join(map(repr, choices))}")
    return tp(value) if isinstance(tp, type) else value


def _convert_container(origin: Any, tp: Any, value: Any, where: str) -> Any:
    """A ``list[...]``, ``dict[str, ...]`` or ``tuple[..., ...]`` annotation: each item converted."""
    if origin is list:
        items = _sequence(value)
        if items is None:
            raise SchemaError(f"{where} is {_show(value)}, expected a list")
        (item_tp,) = typing.get_args(tp) or (Any,)
        return [_convert(item_tp, v, f"{where}[{i}]") for i, v in enumerate(items)]
    if origin is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{where} is {_show(value)}, expected an object")
        _, value_tp = typing.get_args(tp) or (str, Any)
        return {str(k): _convert(value_tp, v, f"{where}.{k}") for k, v in value.items()}
    if origin is tuple:
        items = _sequence(value)
        if items is None:
            raise SchemaError(f"{where} is {_show(value)}, expected a list")
        (item_tp, *_) = typing.get_args(tp) or (Any,)
        return tuple(_convert(item_tp, v, f"{where}[{i}]") for i, v in enumerate(items))
    raise TypeError(f"schema annotation {tp!r} at {where} is not supported")


def _plain_dataclass(tp: type, value: Any, where: str) -> Any:
    """A frozen dataclass that is not a Record (a contract type such as a privacy claim): its fields by
    their annotations, then its own constructor's validation, as a SchemaError naming ``where``."""
    if not isinstance(value, dict):
        raise SchemaError(f"{where} is {_show(value)}, expected an object")
    hints = type_hints(tp)
    values = {
        f.name: _convert(hints[f.name], value[f.name], f"{where}.{f.name}")
        for f in dataclasses.fields(tp)
        if value.get(f.name) is not None
    }
    try:
        return tp(**values)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"{where}: {exc}") from None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def json_name(f: dataclasses.Field[Any]) -> str:
    """The JSON key of a record's field: its ``metadata["json"]`` where it names one, else the field's name."""
    return str(f.metadata.get("json", f.name))


def is_flat(f: dataclasses.Field[Any]) -> bool:
    """A record-valued field written flat (``metadata["flat"]``): its own fields sit beside its parent's keys."""
    return bool(f.metadata.get("flat"))


def record_type(tp: Any) -> Any:
    """The record class of an annotation ``R`` or ``R | None``."""
    options = [t for t in typing.get_args(tp) if t is not type(None)] or [tp]
    return options[0]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Record:
    """A JSON object with typed fields. ``extra`` holds the keys the schema does not name.

    The codec is derived from the fields: a field's JSON key is its name or its ``metadata["json"]``; a field whose
    value is itself a record and whose metadata says ``flat`` is written with its fields beside its parent's (a
    part of a record that keeps the parent's flat JSON layout), and read back from them (None when none of them is
    present). ``migrate`` (a class's own) turns an older layout of the object into the current one before parsing.
    """

    # True: every named field is written, an unset one as null (a summary that lists the same keys for every row)
    WRITE_NULLS: ClassVar[bool] = False
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` in the current layout (a subclass renames or re-types keys of older files here)."""
        return data

    @classmethod
    def json_keys(cls) -> frozenset[str]:
        """Every JSON key this record's fields read (flat parts' keys included); computed once per class."""
        return _json_keys(cls)

    @classmethod
    def from_dict(cls: type[_R], data: dict[str, Any], where: str = "") -> _R:
        if not isinstance(data, dict):
            raise SchemaError(f"{where or cls.__name__} is {_show(data)}, expected an object")
        data = cls.migrate(data)
        hints = type_hints(cls)
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name == "extra":
                continue
            here = f"{where}.{f.name}" if where else f.name
            if is_flat(f):
                part = _flat_part(f, record_type(hints[f.name]), data, where or cls.__name__)
                if part is not None:
                    values[f.name] = part
                continue
            key = json_name(f)
            if key not in data or data[key] is None and f.default is None:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise SchemaError(f"{where or cls.__name__} lacks the field {key!r}")
                continue
            values[f.name] = _convert(hints[f.name], data[key], here)
        names = cls.json_keys()  # a key named "extra" is kept
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**values, extra=extra)

    def __getattr__(self, name: str) -> Any:
        """A flat part's key read as the record's own attribute, by its JSON name (``result.command`` is
        ``result.invocation.command``; ``row.claimed_epsilon`` is ``row.claim.epsilon``); None where that part is
        absent."""
        where = flat_keys(type(self)).get(name)
        if where is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        part = object.__getattribute__(self, where[0])
        return None if part is None else getattr(part, where[1])

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the named fields (:func:`json_ready`; flat parts' fields beside them), then ``extra``.
        An unset field (None) is left out, unless the class writes every field (:attr:`WRITE_NULLS`) or the field's
        metadata says ``keep_none`` (a null that means something): then it is written as null. An unset flat part
        is left out."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if is_flat(f):
                out.update({} if value is None else value.to_dict())
            elif value is not None or self.WRITE_NULLS or f.metadata.get("keep_none"):
                out[json_name(f)] = json_ready(value)
        out.update(self.extra)
        return out


_JSON_KEYS: dict[type, frozenset[str]] = {}  # per record class, filled on first use
_FLAT_KEYS: dict[type, dict[str, tuple[str, str]]] = {}  # per record class, filled on first use


def flat_keys(cls: type[Record]) -> dict[str, tuple[str, str]]:
    """A record class's flat JSON keys: each key -> (the flat part's field, that part's own field); computed once
    per class."""
    if cls not in _FLAT_KEYS:
        hints = type_hints(cls)
        keys: dict[str, tuple[str, str]] = {}
        for f in dataclasses.fields(cls):
            if is_flat(f):
                part = record_type(hints[f.name])
                keys |= {json_name(g): (f.name, g.name) for g in dataclasses.fields(part) if g.name != "extra"}
        _FLAT_KEYS[cls] = keys
    return _FLAT_KEYS[cls]


def _json_keys(cls: type[Record]) -> frozenset[str]:
    if cls not in _JSON_KEYS:
        hints = type_hints(cls)
        keys: set[str] = set()
        for f in dataclasses.fields(cls):
            if f.name != "extra":
                keys |= record_type(hints[f.name]).json_keys() if is_flat(f) else {json_name(f)}
        _JSON_KEYS[cls] = frozenset(keys)
    return _JSON_KEYS[cls]


def _flat_part(f: dataclasses.Field[Any], part: type[Record], data: dict[str, Any], where: str) -> Record | None:
    """A flat part read from its keys in its parent's object; None when none is set (an error if it is required)."""
    keys = part.json_keys()
    own = {k: v for k, v in data.items() if k in keys and v is not None}
    required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    if not own and not required:
        return None
    return part.from_dict(own, where)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Result(Record):
    """A whole result file: a ``kind`` and a ``format_version`` before the kind's own fields."""

    KIND: ClassVar[str] = ""
    FORMAT_VERSION: ClassVar[int] = 1
    # the older format_versions this code still reads (each record's ``migrate`` turns their layout into the current)
    OLDER_VERSIONS: ClassVar[tuple[int, ...]] = ()
    kind: str = ""
    format_version: int = 1

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        return {
            "kind": self.KIND,
            "format_version": self.FORMAT_VERSION,
            **{k: v for k, v in out.items() if k not in ("kind", "format_version")},
        }
