"""Agents trained elsewhere: each library's models behind the project's agent interface.

One module per library, each giving a ``ScoringModel`` (``jekyll_hyde_agents.model_agent``)
that ``ModelAgent`` plays, or an agent of its own where the library's object
already chooses moves (RLCard, OpenSpiel):

- ``sb3``: Stable-Baselines3 and sb3-contrib ``.zip`` files and models in memory;
- ``rllib``: RLlib checkpoints (new API stack) and ``RLModule`` objects;
- ``tianshou``: Tianshou policies;
- ``exchange``: TorchScript (``.pt``) and ONNX (``.onnx``) modules with the
  signature ``(observation float32[B, 327], action_mask float32[B, 28]) -> logits[B, 28]``,
  the framework-neutral format that ``jekyll-hyde export`` writes;
- ``python_agent``: Python functions and objects named ``module:attribute`` or
  ``file.py:attribute``;
- ``openspiel_policy``: OpenSpiel ``policy.Policy`` objects and bots.

Each module imports its library when a model is loaded, never at import time.
SB3 zips, RLlib checkpoints, Tianshou files, TorchScript modules and Python
files run code when they are loaded: load only your own. ``policy.npz`` and ONNX
files are data only.
"""
