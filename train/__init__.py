"""Training, a folder per algorithm: ``expert_iteration`` (the main job, ``make train``),
``ppo`` (self-play on Stable-Baselines3 or Ray RLlib) and ``exploit`` (how beatable a
policy is), each with its config, entry point and report; ``common`` holds what they
share (config loading, files, run folders) and ``algorithms`` names each algorithm's
config class for ``jekyll-hyde train``."""
