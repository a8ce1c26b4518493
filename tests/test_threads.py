"""CPU threads (issue 27, item 10): the default is torch's (the physical cores) capped at the
cores other work leaves free; more threads than free cores warn. docs/benchmarks-history.md ("CPU threads")
has the measurement behind it: with one of two cores busy, 2 threads trained 3.5x slower than 1."""

import warnings

import pytest
import torch

from offroad_env.core import devices


@pytest.fixture
def keep_threads():
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


def _fake_stat(monkeypatch, busy_share, cores=4):
    """/proc/stat readings 1 s apart with ``busy_share`` of all jiffies busy."""
    reads = iter([(0, 0), (int(busy_share * 100 * cores), 100 * cores)])
    monkeypatch.setattr(devices, "_cpu_times", lambda: next(reads))
    monkeypatch.setattr(devices.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(devices.os, "sched_getaffinity", lambda pid: set(range(cores)),
                        raising=False)
    monkeypatch.setattr(devices.time, "sleep", lambda s: None)


@pytest.mark.parametrize("busy, free", [(0.0, 4), (0.25, 3), (0.5, 2), (0.74, 1), (1.0, 1)])
def test_free_cores_are_the_cores_less_the_busy_ones(monkeypatch, busy, free):
    _fake_stat(monkeypatch, busy)
    assert devices.free_cores() == free


def test_the_default_is_torchs_capped_at_the_free_cores(monkeypatch):
    monkeypatch.setattr(devices, "_TORCH_THREADS", 8)
    assert devices.default_threads(free=3) == 3
    assert devices.default_threads(free=64) == 8
    assert devices.default_threads(free=1) == 1


def test_more_threads_than_free_cores_warn(keep_threads):
    torch.set_num_threads(2)
    with pytest.warns(RuntimeWarning, match=r"torch uses 2 CPU threads but only 1 core\(s\) are "
                                            r"free.*--threads 1"):
        assert devices.check_threads(free=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not devices.check_threads(free=2)


def test_configure_threads_sets_the_default_or_the_request(monkeypatch, keep_threads):
    monkeypatch.setattr(devices, "_TORCH_THREADS", 2)
    monkeypatch.setattr(devices, "free_cores", lambda sample_s=0.2: 1)
    assert devices.configure_threads(0) == 1 and torch.get_num_threads() == 1
    monkeypatch.setattr(devices, "free_cores", lambda sample_s=0.2: 4)
    assert devices.configure_threads(0, share=2) == 2  # two local ranks share four cores
    with pytest.warns(RuntimeWarning, match="torch uses 3 CPU threads"):
        assert devices.configure_threads(3, share=2) == 3 and torch.get_num_threads() == 3
    with pytest.raises(ValueError, match="threads must be an int >= 0"):
        devices.configure_threads(-1)


def test_a_small_cpu_batch_steps_on_one_thread_and_the_count_comes_back(keep_threads,
                                                                      monkeypatch):
    """Few rows: the step runs on one thread (two only wait on each other over small tensors;
    BENCHMARKS.md "Small batches"); the caller's count is restored after, and a batch at or
    above ``SINGLE_THREAD_BELOW`` keeps it. The step's result does not depend on it."""
    from offroad_env import OffroadVectorEnv
    torch.set_num_threads(2)
    with devices.batch_threads(32):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with devices.batch_threads(devices.SINGLE_THREAD_BELOW):
        assert torch.get_num_threads() == 2
    with devices.batch_threads(32, "meta"):  # not the CPU: nothing changes
        assert torch.get_num_threads() == 2
    with devices.batch_threads(32, "cpu", compiled=True):  # a compiled step: nothing changes
        assert torch.get_num_threads() == 2
    outs = []
    for rule in (devices.SINGLE_THREAD_BELOW, 0):
        monkeypatch.setattr(devices, "SINGLE_THREAD_BELOW", rule)
        env = OffroadVectorEnv(num_envs=8, max_episode_steps=50)
        obs, _ = env.reset(seed=0)
        steps = [env.step(torch.full((8, 2), 0.5))[0] for _ in range(5)]
        assert torch.get_num_threads() == 2
        outs.append(torch.stack([obs, *steps]))
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
