"""``chops router train`` with the real USE embedder: builds the router from the domain pack's examples once,
and finds it the second time (the examples and the embedder name the file)."""

from __future__ import annotations

import re

from click.testing import CliRunner

from chops.cli import main


def test_chops_router_train_builds_the_packs_router_once(tmp_path, monkeypatch):
    monkeypatch.setenv("CHOPS_DATA_DIR", str(tmp_path))
    first = CliRunner().invoke(main, ["router", "train"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert re.search(r"^\d+ examples of 8 routes from .*router_examples\.jsonl$", first.output, re.M)
    threshold = float(re.search(r"threshold (\d\.\d+)", first.output).group(1))
    assert 0.6 <= threshold < 1
    built = list((tmp_path / "router").glob("router-*.npz"))
    assert len(built) == 1
    stamp = built[0].stat().st_mtime_ns
    again = CliRunner().invoke(main, ["router", "train"], catch_exceptions=False)
    assert again.exit_code == 0 and built[0].stat().st_mtime_ns == stamp  # found, not trained again
    unknown = CliRunner().invoke(main, ["router", "train", "--domain", "bakery"])
    assert unknown.exit_code != 0 and "no domain pack 'bakery'" in unknown.output
