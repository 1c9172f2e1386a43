"""A trained MaskablePPO model (examples/train_maskable_ppo.py) as a scheduler's policy:

    BATREPLAY_PPO_MODEL=runs/ppo-kth/model.zip uv run batreplay run ... --scheduler agent \
        --scheduler-options '{"policy": "examples/ppo_policy.py:act", "jobs_shown": 16, "running_shown": 16}'

Give the scheduler the options the model was trained with (``agent.json`` next to the model): the observation's
shape and scaling depend on them.
"""

from __future__ import annotations

import os
from functools import cache


@cache
def _model():
    from sb3_contrib import MaskablePPO

    path = os.environ.get("BATREPLAY_PPO_MODEL")
    if not path:
        raise ValueError("set BATREPLAY_PPO_MODEL to the model.zip that examples/train_maskable_ppo.py wrote")
    return MaskablePPO.load(path, device="cpu")


def act(observation, mask) -> int:
    """The model's action (deterministic) for ``observation`` among those ``mask`` allows."""
    action, _state = _model().predict(observation, action_masks=mask, deterministic=True)
    return int(action)
