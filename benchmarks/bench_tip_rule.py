"""Benchmark: the compiled vector env at N = 4096 with the static tip limits against the
force-angle rule (the default), four-wheel and skid-steer + rigid, alternating in one process
for 3 rounds of 3-s windows (2 threads).

    python benchmarks/bench_tip_rule.py
"""
import sys, torch
sys.path.insert(0, "benchmarks")
from bench_envs import rate
from offroad_env import OffroadVectorEnv, TaskConfig
torch.set_num_threads(2)
torch._dynamo.config.recompile_limit = 64
envs = {}
for rule in ("limits", "force_angle"):
    for name, kw in (("four_wheel", dict()), ("skid_rigid", dict(dynamics="skid_steer", ground="rigid_contact"))):
        e = OffroadVectorEnv(num_envs=4096, max_episode_steps=500, compile=True, task=TaskConfig(tip_rule=rule), **kw)
        e.reset(seed=0)
        envs[(rule, name)] = e
acts = torch.rand(4096, 2) * 2 - 1
for rnd in range(3):
    for key, e in envs.items():
        with torch.inference_mode():
            r = rate(lambda: e.step(acts), 4096, 3.0)
        print(rnd, key, f"{r:,.0f}", flush=True)
