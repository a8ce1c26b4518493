"""The documentation's GIFs: an episode per registered id (the environment cards), one per
terrain family at levels 0, 5 and 9 on the physical model, and the physical model on the shipped
SRTM DEM (the gallery). Each is a real episode rendered by the env (``render_mode="rgb_array"``)
under a baseline policy.

GIFs are cached in ``docs/_static/gallery/`` with a manifest of the inputs that made each one
(the item's settings, this script, and a digest of the package's source); a GIF whose inputs
changed is stale, and this says so.

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
    """A digest of what an episode's frames depend on: the code (not the comments or
    docstrings) of the core, the terrain, the baseline policies and this script."""
    from terrain.cache import code_digest

    return code_digest(ROOT / "offroad_env", ROOT / "terrain", ROOT / "train" / "planners" / "baselines.py",
                       Path(__file__).resolve())[:16]


def key(settings: dict, digest: str) -> str:
    return hashlib.sha256(json.dumps([settings, digest, SIZE, FRAMES, EVERY, COLOURS],
                                     sort_keys=True).encode()).hexdigest()[:16]


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
        env = gym.make(settings["id"], render_window=20.0, **view)
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
                       render_window=14.0, **view)
    else:
        env = gym.make("offroad_env/OffroadNav-v1", terrain=offroad_env.data_file(
            "srtm1_n37w123_crop401.tif"), dynamics="rigid_body", max_speed=3.0,
            task=offroad_env.TaskConfig(goal_distance=(30.0, 60.0), spawn_margin=50.0),
            render_window=40.0, **view)
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
    digest = source_digest()
    todo = []
    for name, settings in items().items():
        if args.only and name not in args.only:
            continue
        k = key(settings, digest)
        have = manifest.get(name, {})
        if not (OUT / f"{name}.gif").exists():
            todo.append((name, settings, k, "missing"))
        elif have.get("key") != k:
            why = ("the package's source changed" if have.get("settings") == settings
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
