"""Adapters of the environment to other RL frameworks, one module each.

| module | what it gives | optional extra |
|---|---|---|
| ``jekyll_hyde_env.integrations.openspiel`` | the OpenSpiel game ``python_jekyll_hyde``, registered on import: ``pyspiel.load_game("python_jekyll_hyde")`` | ``openspiel`` |
| ``jekyll_hyde_env.integrations.rlcard`` | the RLCard environment ``"jekyll-hyde"``, registered on import: ``rlcard.make("jekyll-hyde")`` | ``rlcard`` (``bench`` brings RLCard too) |
| ``jekyll_hyde_env.integrations.sb3_vec_env`` | ``JekyllHydeSB3VecEnv``, the batched C games as a Stable-Baselines3 ``VecEnv`` for MaskablePPO | ``train`` |
| ``jekyll_hyde_env.integrations.clients`` | the AEC env with the observations RLlib's action-masking modules read (``rllib_env``), and in RLlib's ``PettingZooEnv`` (``rllib_pettingzoo_env``); Tianshou takes ``jekyll_hyde_v0.env()`` as it is | ``rllib`` for ``rllib_pettingzoo_env`` (``bench`` installs Tianshou) |

Each adapter imports the core (the engine, the observation, the envs) and its own
framework at the top of its module; this package imports none of them, so
``import jekyll_hyde_env.integrations`` needs no extra. The core never imports this
package: the environments work without any of these frameworks installed.
"""

# ruff: noqa: E501 - the table above is wide
