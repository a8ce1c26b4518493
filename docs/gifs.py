"""The documentation's GIFs: an episode per registered id (the environment cards), one per
terrain family at levels 0, 5 and 9 on the physical model, and the physical model on the shipped
SRTM DEM (the gallery). Each is a real episode rendered by the env (``render_mode="rgb_array"``)
under a baseline policy.

GIFs are cached in ``docs/_static/gallery/`` with a manifest of what each one shows: the item's
settings, this script's frame settings, and the episode's *fingerprint* (its first
:data:`PROBE_STEPS` steps' poses to the millimetre and milliradian, and its first frame's
pixels). A GIF is stale when what it shows would change, not when any code does: a commit that
leaves every pictured trajectory and the renderer's frame alone leaves the gallery current. The
fingerprints are computed again only when the code they depend on changes (cached in
``docs/_build/gif_fingerprints.json`` by :func:`source_digest`; about a second an item).

    python docs/gifs.py            # make the missing and stale GIFs
    python docs/gifs.py --check    # list them; make nothing
    python docs/gifs.py --only OffroadNav-v1 slopes-9
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
OUT = DOCS / "_static" / "gallery"
MANIFEST = OUT / "manifest.json"
#: the largest GIF kept [bytes]; a larger one is made again with fewer frames
MAX_BYTES = 400_000
#: frame size [px] (the longer side) and frames per GIF
SIZE, FRAMES, EVERY = 256, 48, 3
#: colours of each frame's palette
COLOURS = 48
FAMILIES = ("slopes", "ditches", "boulders", "steps", "rough", "soft_soil", "real")
LEVELS = (0, 5, 9)


def items() -> dict[str, dict]:
    """``{name: settings}`` of every GIF."""
    import offroad_env

    out = {}
    for env_id in offroad_env.ENV_IDS:
        out[env_id.split("/")[-1]] = {"kind": "card", "id": env_id, "seed": 3}
    for fam in FAMILIES:
        for level in LEVELS:
            out[f"{fam}-{level}"] = {"kind": "family", "family": fam, "level": level, "seed": 1}
    out["dem-rigid-body"] = {"kind": "dem", "seed": 2}
    return out


def source_digest() -> str:
    """A digest of the code an episode's frames may depend on (not the comments or
    docstrings): the core, the terrain, the baseline policies and this script. It decides
    when the fingerprints are computed again, not when a GIF is stale."""
    from terrain.cache import code_digest

    return code_digest(ROOT / "offroad_env", ROOT / "terrain", ROOT / "train" / "planners" / "baselines.py",
                       Path(__file__).resolve())[:16]


#: steps of an episode its fingerprint covers
PROBE_STEPS = 30
#: where the fingerprints are cached, by source digest
FINGERPRINTS = DOCS / "_build" / "gif_fingerprints.json"


def key(settings: dict, fingerprint: str) -> str:
    """The manifest key of a GIF: its settings, the frame settings and the episode's
    fingerprint."""
    return hashlib.sha256(json.dumps([settings, fingerprint, SIZE, FRAMES, EVERY, COLOURS],
                                     sort_keys=True).encode()).hexdigest()[:16]


def fingerprint(settings: dict) -> str:
    """What the item's GIF shows, in short: the first :data:`PROBE_STEPS` steps' world poses
    (position to 1 mm, yaw, pitch, roll to 1 mrad) under its policy, and its first frame's
    pixels."""
    import numpy as np

    env, policy = _env(settings)
    obs, _ = env.reset(seed=settings["seed"])
    h = hashlib.sha256(np.ascontiguousarray(env.render()).tobytes())
    for _ in range(PROBE_STEPS):
        obs, _, term, trunc, _ = env.step(policy(obs))
        view = env.unwrapped.state_view()
        pose = np.concatenate([view.base_position_w[0].numpy(), view.ypr[0].double().numpy()])
        h.update(np.round(pose * 1000).astype(np.int64).tobytes())
        if term or trunc:
            break
    env.close()
    return h.hexdigest()[:16]


def fingerprints(names=None) -> dict[str, str]:
    """``{name: fingerprint}`` of the items (``names``: these only), from the cache where the
    source is unchanged, else computed (and cached)."""
    digest = source_digest()
    cache = json.loads(FINGERPRINTS.read_text()) if FINGERPRINTS.exists() else {}
    if cache.get("digest") != digest:
        cache = {"digest": digest, "items": {}}
    out = {}
    for name, settings in items().items():
        if names is not None and name not in names:
            continue
        k = json.dumps(settings, sort_keys=True)
        if cache["items"].get(name, {}).get("settings") != k:
            cache["items"][name] = {"settings": k, "fingerprint": fingerprint(settings)}
        out[name] = cache["items"][name]["fingerprint"]
    FINGERPRINTS.parent.mkdir(parents=True, exist_ok=True)
    FINGERPRINTS.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    return out


def _env(settings: dict):
    """``(env, policy)``: a single env rendering ``rgb_array`` frames, and its driver."""
    import gymnasium as gym
    import numpy as np
    import torch

    import offroad_env
    import terrain
    from train.planners.baselines import heuristic_policy

    view = dict(render_mode="rgb_array", render_view="follow")
    if settings["kind"] == "card":
        env = gym.make(settings["id"], render_window=8.0, **view)  # the vehicle ~30 px
    elif settings["kind"] == "family":
        dem = (str(offroad_env.data_file("srtm1_n37w123_crop401.tif"))
               if settings["family"] == "real" else None)
        fam = terrain.FamilyConfig(size=(24.0, 24.0), family=settings["family"], dem=dem,
                                   resolution=(0.05, 0.05) if settings["family"] == "steps"
                                   else (0.1, 0.1))
        rng = np.random.default_rng(settings["seed"])
        h = terrain.family_level(fam, settings["level"], rng)
        mats = terrain.family_materials(fam, settings["level"], rng)
        hm = terrain.HeightMap(h, fam.resolution, materials=None if mats is None else mats[0],
                               material_names=None if mats is None else mats[1])
        env = gym.make("offroad_env/OffroadTraverse-v1", heightmap=hm, dynamics="rigid_body",
                       render_window=10.0, **view)
    else:
        env = gym.make("offroad_env/OffroadNav-v1", terrain=offroad_env.data_file(
            "srtm1_n37w123_crop401.tif"), dynamics="rigid_body", max_speed=3.0,
            task=offroad_env.TaskConfig(goal_distance=(30.0, 60.0), spawn_margin=50.0),
            render_window=12.0, **view)
    if settings["kind"] == "card" and "goal" not in dict(
            (n, 0) for n, *_ in env.unwrapped.obs_layout):
        def policy(obs):  # the velocity task: a steady curve
            return np.array([0.7, 0.25], dtype=np.float32)
        return env, policy
    drive = heuristic_policy(env.unwrapped)

    def policy(obs):
        return drive(torch.as_tensor(obs).unsqueeze(0))[0].numpy()
    return env, policy


def make(name: str, settings: dict) -> int:
    """Render ``name``'s episode to its GIF; returns its size [bytes]."""
    from PIL import Image

    env, policy = _env(settings)
    obs, _ = env.reset(seed=settings["seed"])
    frames = [env.render()]
    for i in range(FRAMES * EVERY):
        obs, _, term, trunc, _ = env.step(policy(obs))
        if (i + 1) % EVERY == 0:
            frames.append(env.render())
        if term or trunc:
            frames += [env.render()] * 6  # hold the end
            break
    env.close()
    images = [Image.fromarray(f) for f in frames]
    scale = SIZE / max(images[0].size)
    images = [im.resize((round(im.width * scale), round(im.height * scale)))
              .convert("P", palette=Image.ADAPTIVE, colors=COLOURS) for im in images]
    path = OUT / f"{name}.gif"
    step = 1
    while True:
        keep = images[::step]
        keep[0].save(path, save_all=True, append_images=keep[1:], optimize=True,
                     duration=int(1000 * EVERY * step * 0.05), loop=0)
        if path.stat().st_size <= MAX_BYTES or len(keep) < 8:
            return path.stat().st_size
        step += 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="list missing and stale GIFs only")
    ap.add_argument("--only", nargs="*", help="these GIFs only")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    prints = fingerprints(args.only or None)
    todo = []
    for name, settings in items().items():
        if args.only and name not in args.only:
            continue
        k = key(settings, prints[name])
        have = manifest.get(name, {})
        if not (OUT / f"{name}.gif").exists():
            todo.append((name, settings, k, "missing"))
        elif have.get("key") != k:
            why = ("the episode or its frame changed" if have.get("settings") == settings
                   else "its settings changed")
            todo.append((name, settings, k, f"stale: {why} since it was made "
                         f"({have.get('made', '?')})"))
    for name, _, _, why in todo:
        print(f"gifs: {name}.gif {why}")
    if args.check:
        print(f"gifs: {len(todo)} of {len(items())} GIFs missing or stale"
              + ("; python docs/gifs.py makes them" if todo else ""))
        return 0
    for name, settings, k, _ in todo:
        t = time.perf_counter()
        size = make(name, settings)
        manifest[name] = {"key": k, "settings": settings, "bytes": size,
                          "made": time.strftime("%Y-%m-%d")}
        MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        print(f"gifs: {name}.gif {size / 1e3:.0f} kB in {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
