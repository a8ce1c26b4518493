"""Your own task without forking (offroad_env.task.terms): one term of each kind, declared here,
outside the package, and checked against hand computations on the same states."""

import math

import numpy as np
import pytest
import torch

import terrain
from offroad_env import OffroadEnv, OffroadVectorEnv, make_config
from offroad_env.task.terms import (FIRST_USER_CODE, EventTerm, ObservationTerm, RewardTerm,
                               TerminationTerm, load_term, term_path)

CORRIDOR = 3.0  # half-width [m] of the corridor along the sim frame's x axis


def slip_on_sand(ctx, scale=1.0):
    """Mean |slip ratio| of the wheels (the penalty of the guide's example)."""
    return scale * ctx.motion.drive.kappa.abs().mean(1)


def left_corridor(ctx, half_width=CORRIDOR):
    return ctx.state.y.abs() > half_width


def slope_ahead(state, maps, cfg, ahead=1.0):
    """The terrain's rise from under base_link to ``ahead`` m ahead, over ``ahead`` (N, 1)."""
    bp = state.contact.base_position
    x2 = bp[:, 0] + ahead * torch.cos(state.yaw)
    y2 = bp[:, 1] + ahead * torch.sin(state.yaw)
    h0 = maps.height(bp[:, 0], bp[:, 1], state.map_index)
    h1 = maps.height(x2, y2, state.map_index)
    return torch.nan_to_num((h1 - h0) / ahead).unsqueeze(1)


def friction_per_env(ev, mask, lo=0.5, hi=1.0):
    u = ev.uniform(1, mask)[:, 0]
    ev.set_params(mask, friction=lo + (hi - lo) * u)


def _cfg(**terms):
    return make_config("nav", dynamics="skid_steer",
                       terrain=terrain.PerlinConfig(size=(30.0, 30.0), resolution=(0.2, 0.2),
                                                    octaves=2, frequency=0.1, amplitude=0.4),
                       num_maps=1, **terms)


TERMS = dict(rewards={"slip_on_sand": RewardTerm(slip_on_sand, weight=-0.1,
                                                 params={"scale": 2.0})},
             terminations={"left_corridor": TerminationTerm(left_corridor)},
             observations={"slope_ahead": ObservationTerm(slope_ahead, 1, -1.0, 1.0)},
             events={"friction_per_env": EventTerm(friction_per_env, sets=("friction",))})


def _run(cfg, n=64, steps=200, compile=False, seed=3):
    env = OffroadVectorEnv(num_envs=n, config=cfg, compile=compile, max_episode_steps=150)
    obs, _ = env.reset(seed=seed)
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        a = torch.rand(n, 2, generator=g) * 2 - 1
        a[:, 0] = a[:, 0].abs()  # forward, so corridors are left
        st = env.unwrapped.sim.state
        out.append(dict(obs=obs, y_before=st.y.clone()))
        obs, r, term, trunc, info = env.step(a)
        st = env.unwrapped.sim.state
        out[-1].update(r=r, term=term, trunc=trunc, info=info, y=st.y.clone(),
                       obs_next=obs, friction=None if env.unwrapped.params is None
                       else env.unwrapped.params["friction"].clone(),
                       slope=slope_ahead(st, env.unwrapped.sim.maps, cfg).clone())
    return env, out


@pytest.mark.parametrize("compile", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_one_term_of_each_kind_acts_as_declared(compile):
    env, run = _run(_cfg(**TERMS), compile=compile)
    base = env.unwrapped
    # the observation: the layout and space include it, and it is the hand computation
    names = [n for n, _, _ in base.obs_layout]
    assert names[-1] == "slope_ahead" and env.single_observation_space.shape[0] == \
        base.obs_layout[-1][2]
    code = {v: k for k, v in base.end_labels.items()}["left_corridor"]
    assert "reward/slip_on_sand" in run[0]["info"] and "slip_on_sand" in base.reward_terms
    ends = 0
    pending = torch.zeros(64, dtype=torch.bool)  # rows autoreset at this step (next-step mode)
    for s in run:
        info = s["info"]
        # the reward: 2 x the built-in slip term (the same mean |kappa|), weighted by -0.1
        torch.testing.assert_close(info["reward/slip_on_sand"], 2.0 * info["reward/slip"])
        # the termination: where a row leaves the corridor and nothing built-in ended it
        judged = ~pending
        hit = (info["end_reason"] == code) & judged
        outside = s["y"].abs() > CORRIDOR
        builtin = (info["end_reason"] > 0) & (info["end_reason"] != code)
        assert bool((hit == (outside & ~builtin))[judged].all())
        pending = s["term"] | s["trunc"]
        assert bool(s["term"][hit].all()) and not bool(s["trunc"][hit].any())
        ends += int(hit.sum())
        # the observation, on rows that did not end (ended rows show the reset's)
        live = ~(s["term"] | s["trunc"])
        sl = s["obs_next"][:, -1]
        torch.testing.assert_close(sl[live], s["slope"][live, 0].clamp(-1, 1))
        # the event: each env's friction in [0.5, 1), drawn per env
        assert bool(((s["friction"] >= 0.5) & (s["friction"] < 1.0)).all())
    assert ends >= 10, ends
    assert len(set(run[0]["friction"].tolist())) == 64


def test_the_reward_changes_by_weight_times_term_on_the_same_states():
    # the same states with and without the reward term: the reward differs by -0.1 x term
    plain, with_term = _cfg(), _cfg(rewards=TERMS["rewards"])
    _, a = _run(plain, n=8, steps=30)
    _, b = _run(with_term, n=8, steps=30)
    for s, t in zip(a, b):
        torch.testing.assert_close(t["obs"], s["obs"])
        torch.testing.assert_close(t["r"] - s["r"], -0.1 * t["info"]["reward/slip_on_sand"],
                                   rtol=1e-5, atol=1e-6)


def test_a_time_out_termination_truncates_and_the_single_env_names_it():
    cfg = _cfg(terminations={"left_corridor": TerminationTerm(left_corridor, time_out=True,
                                                              params={"half_width": 0.5})})
    env = OffroadEnv(config=cfg)
    env.reset(seed=0)
    for _ in range(400):
        _, _, term, trunc, info = env.step(np.array([1.0, 0.3]))
        if term or trunc:
            break
    assert trunc and not term
    assert info["end_reason"].label == "left_corridor"
    assert int(info["end_reason"]) == FIRST_USER_CODE


def test_bad_terms_are_refused_naming_the_term():
    def wrong_shape(ctx):
        return torch.zeros(3)

    def nan(ctx):
        return torch.full_like(ctx.distance, math.nan)

    def as_float(ctx):
        return torch.zeros_like(ctx.distance)

    for fn, match in ((wrong_shape, "'bad' returned shape"), (nan, "'bad' returned NaN")):
        env = OffroadVectorEnv(num_envs=4, config=_cfg(rewards={"bad": RewardTerm(fn)}))
        env.reset(seed=0)
        with pytest.raises(ValueError, match=match):
            env.step(torch.zeros(4, 2))
    env = OffroadVectorEnv(num_envs=4, config=_cfg(terminations={"bad": TerminationTerm(
        as_float)}))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="'bad' returned torch.float32, expected torch.bool"):
        env.step(torch.zeros(4, 2))
    with pytest.raises(ValueError, match="built-in"):
        _cfg(rewards={"slip": RewardTerm(slip_on_sand)})
    with pytest.raises(ValueError, match="built-in"):
        _cfg(terminations={"tip_over": TerminationTerm(left_corridor)})
    with pytest.raises(ValueError, match="finite"):
        RewardTerm(slip_on_sand, weight=math.inf)
    with pytest.raises(ValueError, match="must be a RewardTerm"):
        _cfg(rewards={"x": slip_on_sand})
    # an event that sets a parameter outside its checked range: refused, naming the event
    env = OffroadVectorEnv(num_envs=4, config=_cfg(events={"icy": EventTerm(
        friction_per_env, sets=("friction",), params={"lo": -1.0, "hi": -0.5})}))
    with pytest.raises(ValueError, match="event term 'icy'.*friction"):
        env.reset(seed=0)
    # one that sets what it did not declare; one that declares what the model does not vary
    env = OffroadVectorEnv(num_envs=4, config=_cfg(events={"sly": EventTerm(friction_per_env)}))
    with pytest.raises(ValueError, match="event term 'sly' sets \\['friction'\\], which its"):
        env.reset(seed=0)
    with pytest.raises(ValueError, match="'heavy' sets \\['mass'\\].*rigid_body model"):
        make_config("nav", dynamics="rigid_body", ground="rigid_contact", events={
            "heavy": EventTerm(friction_per_env, sets=("mass",))})


def test_terms_have_import_paths_and_loading_one_needs_permission():
    path = term_path(slip_on_sand)
    assert path == f"{__name__}:slip_on_sand"
    assert term_path(lambda ctx: ctx.distance) is None
    with pytest.raises(ValueError, match="allow it explicitly"):
        load_term(path)
    assert load_term(path, allow=(__name__,)) is slip_on_sand
    # the config's digest names the function by path, not by address
    assert "test_user_terms:slip_on_sand" in repr(TERMS["rewards"]["slip_on_sand"])


def test_a_run_records_its_terms_and_a_checkpoint_rebuilds_them_only_when_allowed(tmp_path):
    from train import ppo
    from train.common.envconfig import env_kwargs
    from offroad_env.task.terms import terms_from_plain, terms_to_plain

    cfg = _cfg(**TERMS)
    plain = terms_to_plain(cfg)
    assert plain["rewards"]["slip_on_sand"] == {"fn": f"{__name__}:slip_on_sand",
                                                "weight": -0.1, "params": {"scale": 2.0}}
    back = terms_from_plain(plain, allow=(__name__,))
    assert {k: repr(v) for k, v in back["rewards"].items()} == {
        k: repr(v) for k, v in cfg.rewards.items()}
    with pytest.raises(ValueError, match="no import path"):
        terms_to_plain(_cfg(rewards={"x": RewardTerm(lambda ctx: ctx.distance)}))
    # a short PPO run with a declared reward and termination: recorded by path
    own = {"rewards": TERMS["rewards"], "terminations": TERMS["terminations"]}
    s = ppo.train(ppo.PPOConfig(num_envs=16, num_steps=16, total_steps=16 * 16 * 2,
                                out=str(tmp_path), progress=False), env_kwargs=own)
    agent, state = ppo.load_checkpoint(s["checkpoint"])
    spec = state["config"]["env"]
    assert spec["terms"]["terminations"]["left_corridor"]["fn"] == f"{__name__}:left_corridor"
    with pytest.raises(ValueError, match="allow it explicitly"):
        env_kwargs(state["config"]["env_id"], spec, tmp_path)
    kw = env_kwargs(state["config"]["env_id"], spec, tmp_path, allow_modules=(__name__,))
    assert set(kw["rewards"]) == {"slip_on_sand"} and set(kw["terminations"]) == {"left_corridor"}


def test_the_suite_tables_count_a_user_end_reason():
    from train.bench.run import _cell

    labels = np.array(["goal_reached", "left_corridor", "left_corridor", "stuck"])
    per = {"label": labels, "length": np.array([10, 20, 30, 40]),
           "mean_roll": np.zeros(4), "mean_pitch": np.zeros(4), "max_roll": np.zeros(4),
           "max_pitch": np.zeros(4), "min_margin": np.zeros(4), "energy": np.zeros(4)}
    c = _cell(np.ones(4, bool), per, 0.05, extra=("left_corridor",))
    assert c["left_corridor_rate"] == 0.5 and c["success_rate"] == 0.25
    assert c["stuck_rate"] == 0.25 and c["time_to_goal_s"] == 0.5


def test_a_script_records_its_terms_by_its_own_importable_name(tmp_path):
    import subprocess
    import sys

    (tmp_path / "my_terms.py").write_text(
        "from offroad_env.task.terms import term_path, load_term\n\n"
        "def f(ctx):\n    return ctx\n\n"
        "if __name__ == '__main__':\n"
        "    p = term_path(f)\n"
        "    print(p, load_term(p, allow=('my_terms',)).__qualname__)\n")
    out = subprocess.run([sys.executable, str(tmp_path / "my_terms.py")], capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout.split()
    assert out == ["my_terms:f", "f"]


def test_an_interval_event_runs_on_the_rows_at_a_multiple_of_its_period():
    calls = []

    def count(ev, mask):
        calls.append((ev.state.steps.clone(), mask.clone()))

    env = OffroadVectorEnv(num_envs=4, config=_cfg(events={"tick": EventTerm(
        count, mode="interval", every=3)}))
    env.reset(seed=0)
    for _ in range(7):
        env.step(torch.zeros(4, 2))
    assert len(calls) == 7  # called before every step, on the rows whose step count % 3 == 0
    for steps, mask in calls:
        assert torch.equal(mask, steps % 3 == 0)
    assert [bool(m.all()) for _, m in calls] == [True, False, False, True, False, False, True]


def slip_read_on_the_host(ctx):
    """A term that reads a value on the host (``float(tensor)``): dynamo cannot trace it."""
    return torch.full_like(ctx.state.x, float(ctx.motion.drive.kappa.abs().mean()))


@pytest.mark.slow
def test_a_user_term_that_breaks_the_compiled_graph_is_named_in_a_warning():
    import warnings

    # the warning counts the breaks of the step's first trace; dynamo traces a code object at
    # most cache_size_limit times in a process, and the other compiled tests of a slow run
    # use that budget up (the test then saw no trace, so no break): start from a fresh cache
    torch._dynamo.reset()
    cfg = _cfg(rewards={"host_slip": RewardTerm(slip_read_on_the_host, weight=-0.1)})
    env = OffroadVectorEnv(num_envs=8, config=cfg, compile=True, max_episode_steps=50)
    env.reset(seed=0)
    with pytest.warns(RuntimeWarning, match=r"user term\(s\) \['host_slip'\].*breaks its graph"):
        env.step(torch.zeros(8, 2))
    with warnings.catch_warnings():  # said once
        warnings.simplefilter("error", RuntimeWarning)
        env.step(torch.zeros(8, 2))
    # a term that compiles whole says nothing
    env = OffroadVectorEnv(num_envs=8, config=_cfg(rewards=TERMS["rewards"]), compile=True,
                           max_episode_steps=50)
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        env.step(torch.zeros(8, 2))


def _x_from_the_mean(state, maps, cfg):
    """A term that reads across rows: each row's x less the mean x of all rows (N, 1)."""
    return (state.x - state.x.mean()).unsqueeze(1)


def test_a_reset_observes_every_row_again_when_the_config_has_its_own_observation_terms():
    # built-in terms are observed again only on the reset rows; a declared term may read
    # across rows, so with one every row is observed again and the step's rows stay exact
    cfg = _cfg(observations={"x_from_mean": ObservationTerm(_x_from_the_mean, 1, -1e3, 1e3)})
    env = OffroadVectorEnv(num_envs=16, config=cfg, max_episode_steps=5)
    env.reset(seed=2)
    env.unwrapped.set_episode_steps(torch.arange(16) % 5)
    sim = env.unwrapped.sim
    g = torch.Generator().manual_seed(0)
    resets = 0
    for _ in range(8):
        obs, _, term, trunc, _ = env.step(torch.rand(16, 2, generator=g) * 2 - 1)
        resets += int((term | trunc).any())
        assert torch.equal(obs, sim.observe())
    assert resets >= 5


def test_a_term_recorded_under_a_0_1_module_path_loads_from_where_it_moved():
    """Runs and checkpoints of 0.1 recorded functions of offroad_env as ``module:qualname``;
    0.2.0 moved the modules into layers, and those paths still load (the same objects)."""
    from offroad_env.task import rewards, term_paths, terms
    from offroad_env.task.term_paths import MOVED_MODULES, load_term

    assert load_term("offroad_env.terms:terms_to_plain") is terms.terms_to_plain
    assert load_term("offroad_env.rewards:builtin_rewards") is rewards.builtin_rewards
    assert load_term("offroad_env.term_paths:load_term") is term_paths.load_term
    import importlib
    for old, new in MOVED_MODULES.items():  # every new path exists; no old one does
        assert importlib.util.find_spec(new) is not None, new
        # (two old modules are now the packages of their layers)
        assert importlib.util.find_spec(old) is None or old in ("offroad_env.sim",
                                                                "offroad_env.cli"), old


def test_an_allowed_term_module_in_the_working_directory_loads_from_a_console_script(
        tmp_path, monkeypatch):
    """The third trial: --allow-module needed PYTHONPATH from the offroad-env script (its own
    folder is first on sys.path, not the working directory); the refusal named the Python
    keyword only."""
    import sys

    from offroad_env.task.term_paths import load_term

    (tmp_path / "trial_terms_mod.py").write_text("def bonus(ctx):\n    return 1.0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    with pytest.raises(ValueError, match=r"--allow-module trial_terms_mod on the command line"):
        load_term("trial_terms_mod:bonus")
    fn = load_term("trial_terms_mod:bonus", allow=("trial_terms_mod",))
    assert fn(None) == 1.0 and str(tmp_path) not in sys.path
    with pytest.raises(ModuleNotFoundError, match=r"neither on sys.path nor in the working "
                                                  r"directory.*PYTHONPATH"):
        load_term("no_such_terms_mod:f", allow=("no_such_terms_mod",))
