"""Training algorithms: expert iteration, PPO (Stable-Baselines3 or RLlib) and the exploit
responder, chosen by a config of ``jekyll-hyde train``, with their run folders."""
