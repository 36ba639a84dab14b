"""The identity of a proving key, defined once: what requests, batching, the SRS manager, status,
metrics, preload, evict and the daemon all name a key by.

A key is a registry circuit with the parameter folder it is read from (None: the user cache), or a
snarkjs zkey file named by its absolute path. Its `ref` is the one string every layer shows and
the work layer takes: the circuit's name, or "zkey:" + the absolute path (so "toy.zkey",
"./toy.zkey" and "/abs/toy.zkey" are one key). Its SRS entry on a device is `SrsKey(ref, device,
params_dir)`, a tuple whose first element is the ref (status pages show it as the circuit id).

Before this module the engine keyed a zkey by its absolute path while batching and the metrics
used the path as given, and daemon preload/PreloadSRS/EvictSRS named circuits without the
configured parameter folder, so they loaded or evicted entries that requests never used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from cuzk.engine.request import ProofRequest

ZKEY_PREFIX = "zkey:"


def zkey_ref(path: str | os.PathLike[str]) -> str:
    """The ref of a zkey file: "zkey:" + its absolute path."""
    return ZKEY_PREFIX + os.path.abspath(os.fspath(path))


def is_zkey(ref: str) -> bool:
    return ref.startswith(ZKEY_PREFIX)


class SrsKey(NamedTuple):
    """One SRS entry: a key's parameters loaded on one device."""

    ref: str
    device: int
    params_dir: str | None = None


@dataclass(frozen=True)
class KeyId:
    """A proving key: `ref` (circuit name or "zkey:<abs path>") and, for a circuit, its parameter folder."""

    ref: str
    params_dir: str | None = None

    @property
    def is_zkey(self) -> bool:
        return is_zkey(self.ref)

    @property
    def zkey_path(self) -> str:
        return self.ref[len(ZKEY_PREFIX) :]

    def srs(self, device: int) -> SrsKey:
        return SrsKey(self.ref, device, self.params_dir)

    @classmethod
    def of(cls, request: ProofRequest, *, default_params_dir: str | None = None) -> KeyId:
        """The key a request is proved with (a circuit's folder: the request's, else the default)."""
        if request.zkey is not None:
            return cls(zkey_ref(request.zkey))
        folder = request.params_dir if request.params_dir is not None else default_params_dir
        return cls(request.circuit or "", None if folder is None else os.fspath(folder))

    @classmethod
    def named(cls, name: str | os.PathLike[str], *, params_dir: str | None = None) -> KeyId:
        """A key by name, as operators write it: a registry circuit, a zkey ref, or a zkey file's path.

        UnknownCircuitError (naming the registry's circuits) for anything else.
        """
        from cuzk.circuits import get_circuit, names
        from cuzk.errors import UnknownCircuitError

        text = os.fspath(name)
        if is_zkey(text):
            return cls(zkey_ref(text[len(ZKEY_PREFIX) :]))
        if text not in names() and os.path.isfile(text):
            return cls(zkey_ref(text))
        try:
            get_circuit(text)
        except UnknownCircuitError as exc:
            raise UnknownCircuitError(f"{exc}; or give the path of a .zkey file") from None
        return cls(text, params_dir)

    def batch_key(self, options: str) -> str:
        """Jobs with equal batch keys may share a prover pass: one key, one folder, one set of options."""
        return f"{self.ref}|{self.params_dir or ''}|{options}"
