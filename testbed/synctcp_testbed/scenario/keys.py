"""A scenario key's allowed values, and the one line that says a value is not one.

Every key of a scenario file is declared with :func:`num` or :func:`items`:
its default, its range and its unit.  pydantic checks the range; the same
words (``from 1 to 1000 packets``) are kept on the field so that
:func:`model_error` can turn pydantic's first error into one line that
names the file, the key, what it must be and what it is.
"""

from __future__ import annotations

from typing import (Annotated, Any, Callable, Dict, List, Optional, Tuple, Union, get_args,
                    get_origin, get_type_hints)

from pydantic import Field, ValidationError


def bounds(lo: Optional[float], hi: Optional[float], above: bool, unit: str) -> Dict[str, Any]:
    """pydantic bounds plus the words for them (shown in errors)."""
    kw: Dict[str, Any] = {}
    if lo is not None:
        kw["gt" if above else "ge"] = lo
    if hi is not None:
        kw["le"] = hi
    if lo is not None and hi is not None:
        words = (f"above {num_text(lo)}, at most {num_text(hi)}" if above
                 else f"from {num_text(lo)} to {num_text(hi)}")
    elif lo is not None:
        words = f"above {num_text(lo)}" if above else f"of at least {num_text(lo)}"
    else:
        words = f"of at most {num_text(hi)}" if hi is not None else ""
    kw["json_schema_extra"] = {"range": words, "unit": unit}
    return kw


def num_text(v: float) -> str:
    """A bound as the file would write it: 100, 0.5."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def num(default: Any, lo: Optional[float] = None, hi: Optional[float] = None, *,
        above: bool = False, unit: str = "") -> Any:
    """A number key with its allowed range: ``lo`` <= x (``lo`` < x if ``above``) <= ``hi``."""
    return Field(default, **bounds(lo, hi, above, unit))


def items(factory: Callable[[], List[Any]], lo: Optional[float] = None,
          hi: Optional[float] = None, *, above: bool = False, unit: str = "",
          min_length: int = 0) -> Any:
    """A list key; the range (if any) is each item's (the item type says it too)."""
    kw = bounds(lo, hi, above, unit)
    kw.pop("gt", None), kw.pop("ge", None), kw.pop("le", None)
    return Field(default_factory=factory, min_length=min_length, **kw)


#: what the list-valued keys hold and an example of each, for the errors
LIST_KEYS: Dict[str, Tuple[str, str]] = {
    "cc": ("algorithm names", '["reno", "sync"]'),
    "aqm": ("queue disciplines", '["droptail", "red-ecn"]'),
    "systems": ("\"cc/aqm\" pairs", '["sync/droptail", "dctcp/dualpi2"]'),
    "rtts_ms": ("RTTs in ms, one per pair", "[40, 80]"),
    "cross_hops": ("hop numbers", "[1, 3]"),
    "measure": ("link names", '["lr"]'),
    "rev_pairs": ("pair numbers, 1-based", "[1, 2]"),
    "pairs": ("pair numbers, 1-based", "[1, 2]"),
}


def kind_of(value: Any) -> str:
    """``value``'s kind as TOML calls it, with its article."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    return f"a {type(value).__name__}"


def shown(value: Any) -> str:
    """What the file said: ``a string like "fast"``, ``0``, ``true``, ``a list``."""
    if isinstance(value, str):
        return f'a string like "{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return num_text(value)
    return kind_of(value)


SCALAR_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def scalar_type(hint: Any) -> Any:
    """str, int, float or bool for a plain (or Optional) key of that type, else None."""
    if get_origin(hint) is Union:
        args = [a for a in get_args(hint) if a is not type(None)]
        hint = args[0] if len(args) == 1 else None
    if get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    return hint if hint in SCALAR_NAMES else None


def raw(value: Any) -> str:
    """``value`` as TOML writes it."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return num_text(value)
    return kind_of(value)


def range_words(cls: Any, key: str) -> Tuple[str, str]:
    """The words for ``cls.key``'s range and its unit ("" if none)."""
    extra = cls.__pydantic_fields__[key].json_schema_extra
    if not isinstance(extra, dict):
        return "", ""
    return str(extra.get("range", "")), str(extra.get("unit", ""))


def must(cls: Any, key: str, name: str) -> str:
    """What ``name`` (the key ``cls.key`` as the file spells it) must be, in words."""
    hint = get_type_hints(cls, include_extras=True)[key]
    words, unit = range_words(cls, key)
    if get_origin(hint) is list:
        what, example = LIST_KEYS.get(key, ("values", "[...]"))
        each = f" (each {words}{f' {unit}' if unit else ''})" if words else ""
        return f"{name} must be a list of {what}{each}, e.g. {key} = {example}"
    if get_origin(hint) is dict:
        return f"{name} must be a table ([{name}])"
    return (f"{name} must be {SCALAR_NAMES.get(scalar_type(hint), 'a table')}"
            + (f" {words}" if words else "") + (f" ({unit})" if unit else ""))


def model_error(cls: Any, exc: ValidationError, where: str, table: str) -> str:
    """The first of pydantic's errors as one line: file, key, what it must be, what it is."""
    return error_line(cls, exc.errors(include_url=False)[0], where, table)


def model_errors(cls: Any, exc: ValidationError, where: str, table: str) -> List[str]:
    """Every one of pydantic's errors, one line each (a key once)."""
    out: List[str] = []
    for err in exc.errors(include_url=False):
        line = error_line(cls, err, where, table)
        if line not in out:
            out.append(line)
    return out


def error_line(cls: Any, err: Any, where: str, table: str) -> str:
    """One pydantic error as one line: file, key, what it must be, what it is."""
    loc = err["loc"]
    key = str(loc[0]) if loc else ""
    name = f"{table}.{key}" if table else key
    if err["type"] == "missing":
        return f"{where}: {name} is required"
    if key not in cls.__pydantic_fields__:
        return f"{where}: {name}: {err['msg']}"
    value = err["input"]
    if len(loc) > 1 and isinstance(loc[1], int):            # an item of a list
        return f"{where}: {must(cls, key, name)}, not {kind_of(value)} like {raw(value)}"
    hint = get_origin(get_type_hints(cls)[key])
    if isinstance(value, (list, dict)) or hint is dict:
        return f"{where}: {must(cls, key, name)}, not {kind_of(value)}"
    if hint is list:
        return f"{where}: {must(cls, key, name)}, not {kind_of(value)} like {raw(value)}"
    return f"{where}: {must(cls, key, name)}, not {shown(value)}"


def sweep_error(cls: Any, field: str, key: str, exc: ValidationError) -> str:
    """A value of ``sweep.key`` that the key ``cls.field`` cannot take, as one line."""
    words = must(cls, field, "x").split(" must be ", 1)[1]
    err = exc.errors(include_url=False)[0]
    return f"sweep.{key} values must each be {words}, not {shown(err['input'])}"
