"""The checks every config section makes of its values, and the error they raise.

Each section of a config (``run``, ``ppo``, ``responder`` ...) is a dataclass
declared with ``section`` (pydantic checks each value's type as it is built) whose
``check`` refuses impossible values with a ``ConfigError`` that names the
key as the file spells it (``ppo.batch_size``) and what is allowed. A section
names itself by its ``SECTION`` class attribute, else by the name a config
schema gives it (``register_sections``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, cast

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import dataclass_transform  # typing's from Python 3.11 only

from jekyll_hyde_env.engine.variant import parse_variant

_Section = TypeVar("_Section")

SEED_MAX = 2**32 - 1
"""The largest seed a config takes, as every command's ``--seed``: numpy's legacy
seeding (which Stable-Baselines3 uses) takes seeds below 2**32."""
MAX_LAYER_SIZE = 65_536
"""The widest hidden layer a config may ask for (a 65,536-wide layer already holds
billions of weights)."""
MAX_LAYERS = 64
"""The most hidden layers a config may ask for."""
MAX_TRAINING_STEPS = 10**9
"""The most training steps a learner or responder may ask for (weeks on 2 cores)."""
MAX_GAMES_PLAYED = 10**6
"""The most games (or duplicate pairs) one evaluation or labelling setting may ask for."""
MAX_EPOCHS = 1000
"""The most passes over a rollout or a dataset."""
MAX_SIMULATIONS = 10**6
"""The most simulations a search setting may ask for."""


class ConfigError(ValueError):
    """A configuration that cannot be run; the message names the key."""


SECTION_RULES = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
"""How pydantic reads a section: no key it does not declare, no conversion between
kinds (``true`` is not a number, ``1`` is not a string) except an integer where a
float is declared, and no infinite or NaN numbers. A whole number written with an
exponent (``1e6``) is an integer already when the YAML is read
(``jekyll_hyde_train.common.config``)."""


@dataclass_transform(field_specifiers=(dataclasses.field,))
def section(cls: type[_Section]) -> type[_Section]:
    """Declare a config section: a dataclass that pydantic validates as it is built
    (``SECTION_RULES``); its ``check`` then refuses impossible values. (Type checkers
    see the class itself, made a dataclass: ``dataclass_transform``.)"""
    # pydantic types its result as its PydanticDataclass protocol: it is ``cls``, made a
    # dataclass in place
    return cast("type[_Section]", pydantic_dataclass(cls, config=SECTION_RULES))


def known_agents(key: str, specs: list[str]) -> None:
    """Refuse a spec that names no agent (its models are not loaded here)."""
    # lazy: the agents package (and its registry) loads only when a config names agents
    from jekyll_hyde_agents import agent_names
    from jekyll_hyde_agents.sources import names_an_agent  # lazy: as above

    for spec in specs:
        if not names_an_agent(spec):
            raise ConfigError(
                f"{key}: unknown agent {spec!r}; known: {agent_names()}, or a model file "
                "(a saved policy, an SB3 .zip, an .onnx, ...)"
            )


_SECTION_NAMES: dict[type, str] = {}


def register_sections(sections: dict[str, type]) -> None:
    """Name each section class by its key in a config schema (first name wins)."""
    for name, cls in sections.items():
        _SECTION_NAMES.setdefault(cls, name)


def section_name(section: Any) -> str:
    """How messages name ``section``: its ``SECTION``, its schema key, or its class."""
    return (
        getattr(section, "SECTION", None)
        or _SECTION_NAMES.get(type(section))
        or type(section).__name__
    )


def positive(section: Any, *names: str) -> None:
    """Refuse any of the section's ``names`` that is not above zero (a ConfigError naming it)."""
    for name in names:
        value = getattr(section, name)
        if value <= 0:
            raise ConfigError(f"{section_name(section)}.{name} must be positive, got {value}")


def check_seed(section: Any, name: str) -> None:
    """Refuse a seed outside 0 to ``SEED_MAX``."""
    value = getattr(section, name)
    if not 0 <= value <= SEED_MAX:
        raise ConfigError(
            f"{section_name(section)}.{name} must be a whole number from 0 to {SEED_MAX}, "
            f"got {value}"
        )


def check_variant(section: Any, name: str) -> None:
    """Refuse a variant that ``engine.variant.parse_variant`` does not read (RULES.md V1-V7):
    a preset (``full``, ``small``, ``tiny``) or ``key=value`` pairs."""
    value = getattr(section, name)
    try:
        parse_variant(value)
    except ValueError as error:
        raise ConfigError(f"{section_name(section)}.{name}: {error}") from None


def check_folder_name(section: Any, name: str) -> None:
    """Refuse a name that is not one folder's (empty, a path, ``.`` or ``..``, or long)."""
    value = getattr(section, name)
    if not value or "/" in value or "\\" in value or value in (".", "..") or len(value) > 100:
        raise ConfigError(
            f"{section_name(section)}.{name} {value!r} must be a folder name: not empty, at "
            "most 100 characters, without '/' or '\\', not '.' or '..'"
        )


def at_most(section: Any, name: str, limit: int) -> None:
    """Refuse the section's ``name`` above ``limit`` (a budget the config may not exceed)."""
    value = getattr(section, name)
    if value > limit:
        raise ConfigError(
            f"{section_name(section)}.{name} must be at most {limit:,}, got {value:,}"
        )


def layer_sizes(key: str, sizes: list[int] | None) -> None:
    """Refuse hidden layer sizes that are not 1 to ``MAX_LAYERS`` widths of 1 to
    ``MAX_LAYER_SIZE``; ``key`` names them in the message."""
    if (
        not sizes
        or len(sizes) > MAX_LAYERS
        or not all(1 <= size <= MAX_LAYER_SIZE for size in sizes)
    ):
        shown = str(sizes) if len(str(sizes)) <= 60 else str(sizes)[:57] + "..."
        raise ConfigError(
            f"{key} must list positive layer sizes, 1 to {MAX_LAYERS} of them, each at most "
            f"{MAX_LAYER_SIZE:,}, got {shown}"
        )


def one_of(section: Any, name: str, allowed: tuple[str, ...]) -> None:
    """Refuse the section's ``name`` unless it is one of ``allowed`` (named in the error)."""
    value = getattr(section, name)
    if value not in allowed:
        raise ConfigError(f"{section_name(section)}.{name} {value!r} is not one of {list(allowed)}")
