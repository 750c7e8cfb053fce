"""The side-by-side mode of ``bench.ask``: the second setting differs only in the executor's tiers,
and the ratio pairs each case's runs."""

from bench.ask import _paired_ratio, _with_executor_tiers
from chops.settings import Settings, role_tiers


def test_the_second_setting_changes_only_the_executor_tiers():
    base = Settings()
    tiered = _with_executor_tiers(base, ["local-0.5b", "local-1.5b"])
    assert [name for name, _ in role_tiers(tiered, "executor")] == ["local-0.5b", "local-1.5b"]
    assert role_tiers(tiered, "executor")[0][1].max_tokens == base.roles.executor.max_tokens
    for role in ("classifier", "verifier", "chooser"):
        assert tiered.roles.get(role) == base.roles.get(role)
    assert base.roles.executor.tiers == []  # the configured setting is left as it was


def test_the_ratio_is_the_median_of_run_by_run_ratios():
    rows = [{"setup": "a", "latency_s": 10.0}, {"setup": "b", "latency_s": 5.0},
            {"setup": "b", "latency_s": 9.0}, {"setup": "a", "latency_s": 3.0},
            {"setup": "a", "latency_s": 4.0}, {"setup": "b", "latency_s": 4.0}]
    assert _paired_ratio(rows, ["a", "b"]) == 1.0  # ratios 0.5, 3.0, 1.0
    assert _paired_ratio(rows, ["a"]) is None
