"""PPO self-play, on Stable-Baselines3's MaskablePPO (``train``) or on Ray RLlib
(``rllib``), each with its config (``config``, ``rllib_config``) and report
(``report``). ``hyperparameters`` and ``learner`` are the PPO learner's library,
which the exploit responder and expert iteration's exploiters use too."""
