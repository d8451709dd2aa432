"""Every training algorithm's config class, by the name a config's ``algorithm`` key gives.

``jekyll-hyde train`` reads a config's algorithm (``common.config.read_algorithm``)
and loads it with the class named here; each algorithm's entry point is imported
only when its algorithm runs. The classes are the config modules' (no entry
module is imported here), so that every algorithm's sections are known to the
loader, which refuses a section of one algorithm in another's config.
"""

from __future__ import annotations

from jekyll_hyde_train.expert_iteration.config import EITrainConfig
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig

ALGORITHMS: dict[str, type] = {
    "expert_iteration": EITrainConfig,
    "ppo": TrainConfig,
    "rllib": RLlibTrainConfig,
}
"""The config class of each algorithm (``common.config.ALGORITHM_NAMES``)."""
