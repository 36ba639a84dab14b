"""The pinned circom/snarkjs toolchain that the interop tests and benchmarks drive.

Not part of the cuzk wheel (nothing in src/ needs it): tests import it as `tools.toolchain`
(pytest puts the repository root on sys.path) and benchmarks/vs_snarkjs.py adds the root itself.

`Toolchain.ensure()` installs snarkjs, circom2 (circom compiled to WebAssembly)
and circomlib at pinned versions from the npm registry into one cached folder
(CUZK_NPM_CACHE, else <cuzk cache>/npm/<versions>), once; later calls reuse it.
Prepared powers-of-tau files are cached there too, since `snarkjs powersoftau
prepare phase2` is slow (about 25 s at 2^10 on a 2-core machine, doubling per
power).

circom2 runs under a WASI shim that only opens paths relative to its working
directory (absolute include paths and symlinks fail), so it runs from the
toolchain folder with `-l node_modules`.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cuzk import config
from cuzk.paths import cache_dir

SNARKJS_VERSION = "0.7.6"
CIRCOM2_VERSION = "0.2.23"
CIRCOMLIB_VERSION = "2.0.5"
PACKAGES = {"snarkjs": SNARKJS_VERSION, "circom2": CIRCOM2_VERSION, "circomlib": CIRCOMLIB_VERSION}


class ToolchainError(RuntimeError):
    """npm, circom or snarkjs failed; the message carries the command and its output."""


def unavailable_reason() -> str | None:
    """None when node and npm are on PATH, else why the toolchain cannot run here."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found on PATH (install Node.js >= 18)" if missing else None


def default_root() -> Path:
    root = config.get().npm.cache
    tag = "-".join(f"{k}{v}" for k, v in PACKAGES.items())
    return root / tag if root else cache_dir("npm", tag)


def _run(cmd: Sequence[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolchainError(f"timed out after {timeout:.0f} s: {' '.join(cmd)}") from exc
    if proc.returncode != 0:
        raise ToolchainError(
            f"exit {proc.returncode}: {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


@dataclass(frozen=True)
class Toolchain:
    root: Path

    @classmethod
    def ensure(cls, root: Path | None = None) -> Toolchain:
        """Install the pinned packages into `root` unless they are already there (file-locked)."""
        reason = unavailable_reason()
        if reason:
            raise ToolchainError(reason)
        tc = cls((root or default_root()).resolve())
        tc.root.mkdir(parents=True, exist_ok=True)
        with open(tc.root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not tc._installed():
                (tc.root / "package.json").write_text(json.dumps({"private": True, "dependencies": PACKAGES}))
                _run(["npm", "install", "--no-audit", "--no-fund", "--save-exact"], tc.root, timeout=600)
                if not tc._installed():
                    raise ToolchainError(f"npm install in {tc.root} did not produce the pinned versions")
        return tc

    def _installed(self) -> bool:
        for name, version in PACKAGES.items():
            manifest = self.root / "node_modules" / name / "package.json"
            try:
                if json.loads(manifest.read_text()).get("version") != version:
                    return False
            except (OSError, ValueError):
                return False
        return True

    @property
    def node_modules(self) -> Path:
        return self.root / "node_modules"

    def _snarkjs_cmd(self, args: Sequence[str | Path]) -> list[str]:
        # snarkjs runs in the toolchain folder, so a relative Path would name the wrong file
        cli = self.node_modules / "snarkjs" / "build" / "cli.cjs"
        return ["node", str(cli), *(str(a.resolve()) if isinstance(a, Path) else a for a in args)]

    def snarkjs(self, *args: str | Path, cwd: Path | None = None, timeout: float = 3600) -> str:
        """Run snarkjs; returns stdout (raises ToolchainError on a non-zero exit)."""
        return _run(self._snarkjs_cmd(args), cwd or self.root, timeout).stdout

    def snarkjs_status(self, *args: str | Path, timeout: float = 600) -> tuple[int, str]:
        """Run snarkjs and return (exit code, stdout + stderr) without raising: for verify."""
        proc = subprocess.run(
            self._snarkjs_cmd(args),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return proc.returncode, proc.stdout + proc.stderr

    def circom(self, circuit: Path, out_dir: Path, *flags: str, timeout: float = 3600) -> Path:
        """Compile with --prime bls12381 to out_dir/<name>.r1cs and <name>_js/<name>.wasm."""
        out_dir.mkdir(parents=True, exist_ok=True)
        cli = self.node_modules / "circom2" / "cli.js"
        cmd = ["node", str(cli), str(circuit.resolve()), "--r1cs", "--wasm", "--prime", "bls12381"]
        cmd += ["-l", "node_modules", "-o", str(out_dir.resolve()), *flags]
        _run(cmd, self.root, timeout)
        return out_dir / f"{circuit.stem}.r1cs"

    def witness(self, wasm: Path, inputs: dict, out: Path, timeout: float = 3600) -> Path:
        """snarkjs wtns calculate with the circuit's wasm and an input dict."""
        inp = out.with_suffix(".input.json")
        inp.write_text(json.dumps(inputs))
        self.snarkjs("wtns", "calculate", wasm, inp, out, timeout=timeout)
        return out

    def ptau(self, power: int, *, contribute: bool = True) -> Path:
        """A prepared (phase 2) powers-of-tau of 2^power, with one contribution unless told not to.

        Without a contribution tau = 1 and every public input of a key made from it is unbound.
        """
        kind = "contributed" if contribute else "uncontributed"
        final = self.root / "ptau" / f"bls12381_{power}_{kind}.ptau"
        if final.exists():
            return final
        final.parent.mkdir(exist_ok=True)
        with open(final.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if final.exists():
                return final
            work = final.parent / f"tmp_{power}_{kind}_{os.getpid()}"
            work.mkdir(exist_ok=True)
            self.snarkjs("powersoftau", "new", "bls12381", str(power), work / "0.ptau")
            src = work / "0.ptau"
            if contribute:
                entropy = os.urandom(32).hex()
                self.snarkjs(
                    "powersoftau", "contribute", src, work / "1.ptau", "--name=cuzk-test", f"-e={entropy}"
                )
                src = work / "1.ptau"
            self.snarkjs("powersoftau", "prepare", "phase2", src, work / "final.ptau")
            os.replace(work / "final.ptau", final)
            shutil.rmtree(work, ignore_errors=True)
        return final
