"""Parsing of the small string languages on the command line: model specs and ``k=v`` lists."""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from matpcr.errors import MatpcrError


@dataclass
class ModelSpec:
    backend: str
    model: str
    revision: str | None = None

    def __str__(self) -> str:
        rev = f"@{self.revision}" if self.revision else ""
        return f"{self.backend}:{self.model}{rev}" if self.model else self.backend


def parse_model_spec(spec: str) -> ModelSpec:
    """``NAME:MODEL[@REVISION]``; a bare ``NAME`` selects a backend with a built-in model."""
    spec = spec.strip()
    if not spec:
        raise MatpcrError("empty --model; use NAME:MODEL[@REVISION], e.g. hf:HuggingFaceTB/SmolLM2-135M-Instruct")
    backend, _, rest = spec.partition(":")
    revision = None
    head, at, tail = rest.rpartition("@")
    if at and head and tail and "/" not in tail:
        rest, revision = head, tail
    return ModelSpec(backend, rest, revision)


def coerce(value: str) -> Any:
    """Turn a command-line string into int, float, bool, None or JSON where it clearly is one."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            number = kind(value)
        except ValueError:
            continue
        if kind is float and not math.isfinite(number):
            return value  # "nan", "inf": left as text, so numeric settings reject them by name
        return number
    if value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            pass
    return value


def parse_kv(text: str | None, what: str = "--model-args") -> dict[str, Any]:
    """``k=v,k2=v2`` into a dict with coerced values."""
    out: dict[str, Any] = {}
    if not text:
        return out
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        if "=" not in piece:
            raise MatpcrError(f"{what}: {piece!r} is not key=value (write e.g. {what} dtype=bfloat16,max_length=4096)")
        key, value = piece.split("=", 1)
        if not key.strip():
            raise MatpcrError(f"{what}: {piece!r} has no key before '='")
        out[key.strip()] = coerce(value.strip())
    if what == "--generation":
        return check_generation(out, what)
    return out


def parse_oracle_args(texts: list[str] | tuple[str, ...] | str | None) -> dict[str, dict[str, Any]]:
    """``ORACLE.key=value`` (comma-separated or repeated) into ``{oracle: {key: value}}``."""
    if isinstance(texts, str):
        texts = [texts]
    out: dict[str, dict[str, Any]] = {}
    for text in texts or ():
        for key, value in parse_kv(text, "--oracle-args").items():
            if "." not in key:
                raise MatpcrError(f"--oracle-args: {key!r} must be ORACLE.param=value, e.g. raman.tolerance_cm1=10")
            oracle, param = key.split(".", 1)
            if not oracle or not param:
                raise MatpcrError(f"--oracle-args: {key!r} must be ORACLE.param=value, e.g. raman.tolerance_cm1=10")
            if "tol" in param.lower():  # tolerances are non-negative numbers whatever the oracle
                value = _number(f"--oracle-args {key}", value, float, minimum=0.0)
            out.setdefault(oracle, {})[param] = value
    return out


# -- typed settings --------------------------------------------------------------------------------

def _number(what: str, value: Any, kind: type, minimum: float | None = None, maximum: float | None = None,
            exclusive_min: bool = False) -> Any:
    """``value`` as an int or float, or a one-line MatpcrError naming the setting."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise MatpcrError(f"{what}: {value!r} is not a number")
    try:
        number = kind(value) if not isinstance(value, str) else kind(float(value) if kind is float else int(value))
    except (TypeError, ValueError, OverflowError):
        noun = "a whole number" if kind is int else "a number"
        raise MatpcrError(f"{what}: {value!r} is not {noun}") from None
    if kind is int and isinstance(value, float) and value != int(value):
        raise MatpcrError(f"{what}: {value!r} is not a whole number")
    if isinstance(number, float) and not math.isfinite(number):
        raise MatpcrError(f"{what}: {value!r} is not a finite number")
    if minimum is not None and (number < minimum or (exclusive_min and number == minimum)):
        bound = f"> {minimum:g}" if exclusive_min else f"≥ {minimum:g}"
        raise MatpcrError(f"{what}: {value!r} must be {bound}")
    if maximum is not None and number > maximum:
        raise MatpcrError(f"{what}: {value!r} must be ≤ {maximum:g}")
    return number


#: the generation settings every backend understands, with their bounds
GENERATION_SETTINGS = {
    "max_new_tokens": (int, 1, None, False),
    "temperature": (float, 0.0, None, False),
    "top_p": (float, 0.0, 1.0, True),
}


def check_generation(settings: dict[str, Any], what: str = "--generation") -> dict[str, Any]:
    """Generation settings checked and typed: known names only, numbers within their bounds."""
    out = {}
    for key, value in settings.items():
        if key not in GENERATION_SETTINGS:
            raise MatpcrError(f"{what}: unknown setting {key!r}; known settings: {', '.join(GENERATION_SETTINGS)}")
        kind, low, high, exclusive = GENERATION_SETTINGS[key]
        out[key] = _number(f"{what} {key}", value, kind, low, high, exclusive)
    return out


def _kind_of(default: Any, annotation: Any) -> type | None:
    if default is not None and default is not inspect.Parameter.empty:
        return type(default) if isinstance(default, (bool, int, float, str, dict, list)) else None
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    for name, kind in (("bool", bool), ("int", int), ("float", float), ("dict", dict), ("list", list), ("str", str)):
        if text.split("|")[0].strip().startswith(name):
            return kind
    return None


def coerce_value(what: str, value: Any, kind: type | None, nonnegative: bool = False) -> Any:
    """One ``k=v`` value as the type its default has, or a one-line MatpcrError naming it."""
    if value is None or kind is None:
        return value
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        raise MatpcrError(f"{what}: {value!r} is not true or false")
    if kind in (int, float):
        return _number(what, value, kind, 0 if nonnegative else None)
    if kind is str:
        if isinstance(value, (dict, list)):
            raise MatpcrError(f"{what}: expects text, not {type(value).__name__}")
        return str(value)
    if not isinstance(value, kind):
        example = "{\"k\": 1}" if kind is dict else "[1, 2]"
        raise MatpcrError(f"{what}: expects a JSON {kind.__name__} such as {example}, not {value!r}")
    return value


def coerce_params(what: str, defaults: dict[str, Any], params: dict[str, Any],
                  nonnegative: bool | Iterable[str] = True) -> dict[str, Any]:
    """``defaults`` overridden by ``params``, each coerced to its default's type with a clear error.

    For ``Oracle.__init__`` (``what`` like ``"--oracle-args xrd"``): unknown names, ``abc`` for a number
    and (by default) negative tolerances end in a MatpcrError naming ``what.param``.
    """
    import difflib

    unknown = sorted(set(params) - set(defaults))
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(defaults), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise MatpcrError(f"{what}: unknown parameter {unknown[0]!r}{hint} Known: {', '.join(defaults) or '(none)'}")
    signed_ok = set() if nonnegative is True else set(defaults) if nonnegative is False else set(defaults) - set(nonnegative)
    out = {}
    for key, default in defaults.items():
        if key not in params:
            out[key] = default
            continue
        kind = type(default) if default is not None else None
        out[key] = coerce_value(f"{what}.{key}", params[key], kind, nonnegative=key not in signed_ok)
    return out


def coerce_call_args(what: str, func: Callable[..., Any], args: dict[str, Any],
                     skip: Iterable[str] = ()) -> dict[str, Any]:
    """``args`` checked against ``func``'s keyword parameters: unknown names are an error (unless it takes
    ``**kwargs``) and each value is coerced to the type of the parameter's default (or annotation).

    For backend factories (``--model-args``) and interventions (``--intervention-args``): e.g.
    ``coerce_call_args("--intervention-args", CGSV.__init__, args)``.
    """
    import difflib

    params = {n: p for n, p in inspect.signature(func).parameters.items()
              if n not in ("self", *skip) and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    open_ended = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(func).parameters.values())
    out = {}
    for key, value in args.items():
        param = params.get(key)
        if param is None:
            if open_ended:
                out[key] = value
                continue
            close = difflib.get_close_matches(key, list(params), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MatpcrError(f"{what}: unknown setting {key!r}{hint} Known: {', '.join(params) or '(none)'}")
        out[key] = coerce_value(f"{what} {key}", value, _kind_of(param.default, param.annotation))
    return out
