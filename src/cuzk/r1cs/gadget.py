"""Gadget calls: the unit that recording stamps and the witness program batches.

A function decorated with `@gadget` is an ordinary bellman-style routine
``fn(cs, *args, **params)``. How a call runs depends on the constraint system:

- direct (concrete values): the body runs inline, as in bellman;
- recording: the body runs once per *template* (gadget name, static params and
  the structural signature of its arguments) on a scratch system whose
  arguments are placeholder "ports"; every later call with the same template
  is stamped (its rows copied with the columns renumbered, all numpy), and a
  top-level call is logged as a witness-program op (template, port variables,
  the aux range it fills);
- witness (no constraints, values in lanes): the body runs once for all the
  lanes of a group of identical top-level calls, vectorized over the lanes.

Arguments are trees (lists, tuples) of *leaf* types that implement the small
flatten protocol below (Bits and Num in `cuzk.gadgets`), plus static scalars.
Params (keyword arguments) must be JSON values: they are part of the template
key, which is stored in cached recordings.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import numpy as np

from cuzk.errors import CircuitError

#: Placeholder variables for the ports of a template: port k is PORT + k.
PORT = 1 << 40


class Leaf(Protocol):
    """A gadget argument type: it names its variables and rebuilds itself from them."""

    def cuzk_flatten(self) -> tuple[str, Any, list[int]]:
        """(tag, static meta (JSON), variables in port order)."""
        ...


#: tag -> (rebuild from variables, rebuild from port values (lanes, k, 4))
LEAF_TYPES: dict[str, tuple[Callable[[Any, list[int]], Any], Callable[[Any, np.ndarray], Any]]] = {}

#: gadget key -> undecorated function; how a cached recording finds its code again.
GADGETS: dict[str, Callable[..., Any]] = {}

F = TypeVar("F", bound=Callable[..., Any])


def register_leaf(
    tag: str, from_vars: Callable[[Any, list[int]], Any], from_values: Callable[[Any, np.ndarray], Any]
) -> None:
    LEAF_TYPES[tag] = (from_vars, from_values)


def gadget(fn: F | None = None, *, name: str | None = None) -> Any:
    """Decorate fn(cs, *args, **params) so that recording can stamp it and the witness program batch it."""

    def wrap(f: F) -> F:
        key = name or f"{f.__module__.removeprefix('cuzk.')}.{f.__qualname__}"
        if key in GADGETS and GADGETS[key] is not f:
            raise CircuitError(f"two gadgets are registered under the name {key!r}")
        GADGETS[key] = f

        @functools.wraps(f)
        def call(cs: Any, *args: Any, **params: Any) -> Any:
            return cs.call_gadget(key, f, args, params)

        call.gadget_key = key  # type: ignore[attr-defined]
        call.body = f  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap


# --- flattening arguments into ports ---------------------------------------------------


def flatten(args: Any) -> tuple[Any, list[int]]:
    """(signature, port variables) of an argument tree; the signature is JSON-serializable."""
    ports: list[int] = []
    sig = _flat(args, ports)
    return sig, ports


def _flat(x: Any, ports: list[int]) -> Any:
    if isinstance(x, (list, tuple)):
        return ["l", [_flat(y, ports) for y in x]]
    if x is None or isinstance(x, (bool, int, str, float)):
        return ["s", x]
    fl = getattr(x, "cuzk_flatten", None)
    if fl is None:
        raise CircuitError(f"a gadget argument of type {type(x).__name__} cannot be passed to a gadget")
    tag, meta, vs = fl()
    ports.extend(vs)
    return [tag, meta, len(vs)]


def unflatten_vars(sig: Any, ports: list[int]) -> Any:
    """Rebuild arguments whose variables are `ports` (the placeholders of a template)."""
    it = iter(ports)
    return _unflat_vars(sig, it)


def _unflat_vars(sig: Any, it: Any) -> Any:
    tag = sig[0]
    if tag == "l":
        return [_unflat_vars(s, it) for s in sig[1]]
    if tag == "s":
        return sig[1]
    vs = [next(it) for _ in range(sig[2])]
    return LEAF_TYPES[tag][0](sig[1], vs)


def unflatten_values(sig: Any, values: np.ndarray) -> Any:
    """Rebuild arguments in witness mode from port values (lanes, n_ports, 4), Montgomery form."""
    pos = [0]

    def rec(s: Any) -> Any:
        tag = s[0]
        if tag == "l":
            return [rec(t) for t in s[1]]
        if tag == "s":
            return s[1]
        k = s[2]
        v = values[:, pos[0] : pos[0] + k]
        pos[0] += k
        return LEAF_TYPES[tag][1](s[1], v)

    return rec(sig)


def template_key(gadget_key: str, params: dict[str, Any], sig: Any) -> str:
    """The canonical string naming a template (JSON, so it round-trips through the cache)."""
    try:
        return json.dumps([gadget_key, params, sig], sort_keys=True, separators=(",", ":"))
    except TypeError as exc:
        raise CircuitError(f"gadget {gadget_key}: params must be JSON values ({exc})") from exc


@functools.lru_cache(maxsize=4096)
def parse_template_key(tkey: str) -> tuple[str, dict[str, Any], Any]:
    key, params, sig = json.loads(tkey)
    return key, params, sig


def map_vars(obj: Any, f: Callable[[int], int]) -> Any:
    """Apply f to every variable in an output tree (leaf types implement cuzk_map_vars)."""
    if isinstance(obj, list):
        return [map_vars(x, f) for x in obj]
    if isinstance(obj, tuple):
        return tuple(map_vars(x, f) for x in obj)
    m = getattr(obj, "cuzk_map_vars", None)
    return obj if m is None else m(f)
