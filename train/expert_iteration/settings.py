"""The settings of a labelling run and its fit (``DistillSettings``), and their record.

``jekyll-hyde distill`` and each generation of expert iteration label games of a
search teacher and fit a network to them. Their shared settings are declared once,
in ``jekyll_hyde_train.expert_iteration.config.LabelAndFitSettings``; a
labelling run adds its teacher, seed, optional opponent and the variant of the
game it plays (RULES.md V1-V7). A run folder records them in ``distill.json``
(``to_json``), and a resumed run is checked against that record: another teacher,
seed, shard size or variant would mix two datasets.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from dataclasses import dataclass
from typing import Any

from jekyll_hyde_agents import AZAgent, AZSpec, ISMCTSAgent, make_agent
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_train.common.files import (
    FileFormatError,
    atomic_write_text,
    check_fields,
    one_line,
    read_json_file,
)
from jekyll_hyde_train.expert_iteration.config import LabelAndFitSettings, playout_cap_problem
from jekyll_hyde_train.expert_iteration.teacher import (
    Teacher,
    build_teacher,
    parse_teacher,
    teacher_from_json,
    teacher_json,
    teacher_label,
)

SETTINGS_FILE = "distill.json"


# The settings that decide what the shards hold; the others only shape the fit.
GENERATION_KEYS = (
    "teacher",
    "games_per_shard",
    "seed",
    "network_play",
    "full_search_share",
    "fast_simulations",
    "opponent",
    "variant",
)

OMITTED = {"variant": FULL.name}
"""Keys that ``DistillSettings.to_json`` leaves out at these values, so that the
files of a run of the full game read as they did before variants: a record without
``variant`` is of the full game (``recorded``)."""


def recorded(data: dict, key: str) -> Any:
    """A key of recorded settings, read as ``to_json`` means it (``OMITTED``).

    Args:
        data: settings as ``DistillSettings.to_json`` or ``check_settings`` give them.
        key: the setting's name.

    Returns:
        Its value; for a key left out, its ``OMITTED`` value (None for the others).
    """
    return data.get(key, OMITTED.get(key))


@dataclass
class DistillSettings(LabelAndFitSettings):
    """What to label and how to fit: the labelling and fit settings
    (``LabelAndFitSettings``, with their defaults) and the run's own.

    Built by code rather than read from a file, it checks its values as it is
    made and refuses the first impossible one with a one-line ``ValueError``.

    Attributes:
        teacher: the search that labels: ``ismcts:N`` or ``ismcts:Xs`` by name, or
            network-guided search as an ``AZSpec`` (``parse_teacher`` reads
            ``az:N,policy=PATH``).
        seed: fixes every deal and every search.
        opponent: an agent (any agent name or saved policy) that plays one
            seat of every game, Hyde in the even games and Jekyll in the odd
            ones, and is never labelled: the teacher plays and labels the other
            seat, so the data hold the search's answers to that opponent's
            lines (an exploiter's, say). None: the teacher plays both seats.
        variant: the version of the game the games are dealt in (RULES.md V1-V7):
            ``full``, ``small``, ``tiny`` or ``key=value`` pairs, kept as the
            variant's one spelling (``Variant.name``). A network-guided teacher's
            policy must have been trained on it.
    """

    teacher: Teacher = "ismcts:2000"
    seed: int = 0
    opponent: str | None = None
    variant: str = FULL.name

    def __post_init__(self) -> None:
        if isinstance(self.teacher, str):  # a teacher named by text is parsed once, here
            self.teacher = parse_teacher(self.teacher)
        self.variant = parse_variant(self.variant).name  # one spelling per variant
        self.check_label_and_fit()
        if not self.value_loss_weight >= 0:
            raise ValueError(f"value_loss_weight must be >= 0, got {self.value_loss_weight}")
        if self.opponent is not None:
            # an unknown name or unreadable policy is named now, as is another variant's policy
            trained = _trained_on(make_agent(self.opponent))
            if trained is not None and trained != self.game_variant:
                raise ValueError(
                    f"opponent {self.opponent} was trained on variant {trained.name}, but "
                    f"the games are of variant {self.variant}"
                )
        teacher = build_teacher(self.teacher)
        if not isinstance(teacher, (ISMCTSAgent, AZAgent)):
            raise ValueError(
                f"teacher {teacher_label(self.teacher)!r} is not a search agent; use "
                "'ismcts:N' (simulations), 'ismcts:Xs' (seconds per decision) or "
                "'az:N,policy=PATH'"
            )
        trained = _trained_on(teacher)
        if trained is not None and trained != self.game_variant:
            raise ValueError(
                f"teacher {teacher_label(self.teacher)!r} searches with a policy trained on "
                f"variant {trained.name}, but the games are of variant {self.variant}; "
                f"use a policy of variant {self.variant}"
            )
        if self.network_play and not isinstance(self.teacher, AZSpec):
            raise ValueError(
                f"network_play {self.network_play} needs a network-guided teacher "
                f"('az:N,policy=PATH'), got {self.teacher!r}"
            )
        self._check_playout_cap(teacher)

    def _check_playout_cap(self, teacher: ISMCTSAgent | AZAgent) -> None:
        if 0 < self.full_search_share < 1 and (
            not isinstance(teacher, AZAgent) or teacher.config.time_budget
        ):
            raise ValueError(
                f"full_search_share {self.full_search_share} needs a network-guided teacher "
                f"with a simulation count ('az:N,policy=PATH'), got {teacher_label(self.teacher)!r}"
            )
        simulations = teacher.config.num_simulations if isinstance(teacher, AZAgent) else 0
        problem = playout_cap_problem(self.full_search_share, self.fast_simulations, simulations)
        if problem:
            raise ValueError(problem)

    @property
    def shards(self) -> int:
        return -(-self.games // self.games_per_shard)

    @property
    def game_variant(self) -> Variant:
        """The variant the games are dealt in (``variant`` read by ``parse_variant``)."""
        return parse_variant(self.variant)

    def to_json(self) -> dict[str, Any]:
        """The settings as ``distill.json`` records them (the teacher as ``teacher_json``;
        ``variant`` only when it is not the full game, ``OMITTED``)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["teacher"] = teacher_json(self.teacher)
        data["hidden"] = list(self.hidden)
        for key, value in OMITTED.items():
            if data[key] == value:
                del data[key]
        return data


def _trained_on(agent: Any) -> Variant | None:
    """The variant a saved policy (or the network of an ``az`` search) was trained on,
    and so the only one it plays; None for an agent without one."""
    policy = agent.policy if isinstance(agent, AZAgent) else agent
    variant = getattr(policy, "variant", None)
    return variant if isinstance(variant, Variant) else None


UNRECORDED = {
    "shared_policy": False,
    "lr_schedule": "constant",
    "weight_decay": 0.0,
    "value_loss_weight": 1.0,
    "network_play": 0.0,
    "full_search_share": 1.0,
    "fast_simulations": 0,
    "opponent": None,
}
"""What a run of an older version, whose ``distill.json`` lacks these keys, was
made with: a fact about those files, not a default of today's settings."""


def with_defaults(saved: dict) -> dict:
    """Saved settings (``DistillSettings.to_json``) with the values of the keys an
    older version did not record (``UNRECORDED``), so that its runs and fits still
    resume."""
    return {**UNRECORDED, **saved}


SETTINGS_WHAT = "a distillation run's settings (JSON)"


def _settings_kinds() -> dict[str, str]:
    """``check_fields`` kinds of the saved settings, from ``DistillSettings``' types
    (the teacher is checked by ``teacher_from_json``)."""
    kinds = {
        "bool": "flag", "int": "integer", "float": "finite", "str": "text",
        "list[int]": "list", "str | None": "text or null",
    }  # fmt: skip
    return {
        f.name: kinds[str(f.type)]
        for f in dataclasses.fields(DistillSettings)
        if f.name != "teacher"
    }


def check_settings(path: pathlib.Path, saved: Any, where: str = "") -> dict:
    """Check saved settings (``DistillSettings.to_json``, an older version's may lack
    keys) against their schema; returns them with the values of the missing keys,
    the teacher as ``teacher_json`` writes it (an older run's ``az:...`` text is
    read as the spec it names).

    Raises:
        FileFormatError: naming ``path`` and the first key that is unknown or mistyped.
    """
    kinds = _settings_kinds()
    teacher = saved.get("teacher") if isinstance(saved, dict) else None
    rest = {k: v for k, v in saved.items() if k != "teacher"} if isinstance(saved, dict) else saved
    checked = check_fields(path, rest, kinds, optional=tuple(kinds), where=where)
    hidden = checked.get("hidden", [1])
    if not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden):
        name = f"{where}.hidden" if where else "hidden"
        raise FileFormatError(path, f"{name} must list positive whole numbers, got {hidden!r}")
    if "variant" in checked:
        try:
            parse_variant(checked["variant"])
        except ValueError as error:
            name = f"{where}.variant" if where else "variant"
            raise FileFormatError(path, f"{name}: {one_line(str(error))}") from None
    if teacher is not None:
        name = f"{where}.teacher" if where else "teacher"
        try:
            checked["teacher"] = teacher_json(teacher_from_json(teacher))
        except ValueError as error:
            raise FileFormatError(path, f"{name}: {one_line(str(error))}") from None
    return with_defaults(checked)


def read_settings(path: pathlib.Path) -> dict:
    """A run's ``distill.json``, checked (``check_settings``)."""
    return check_settings(path, read_json_file(path, SETTINGS_WHAT))


FIT_WHAT = "a fit's summary (JSON)"
_FIT_FIELDS = {
    "games": "count",
    "decisions": "count",
    "validation_decisions": "count",
    "seconds": "seconds",
    "settings": "mapping",
    "history": "list",
}
_EPOCH_FIELDS = {
    "role": "text",
    "epoch": "count",
    "train_loss": "number",
    "train_value_loss": "number",
    "validation_loss": "number",
    "validation_value_loss": "number",
    "validation_agreement": "number",
}


def read_fit_summary(path: pathlib.Path) -> dict:
    """A fit's ``fit.json`` (``jekyll_hyde_train.expert_iteration.fit.fit``'s summary), checked
    against its
    schema: counts, seconds, the settings and a row of measures per epoch.

    Raises:
        FileFormatError: naming the file and the first problem.
    """
    summary = check_fields(path, read_json_file(path, FIT_WHAT), _FIT_FIELDS)
    summary["settings"] = check_settings(path, summary["settings"], where="settings")
    validation = ("validation_loss", "validation_value_loss", "validation_agreement")
    for i, row in enumerate(summary["history"]):
        check_fields(path, row, _EPOCH_FIELDS, optional=validation, where=f"history[{i}]")
        if 0 < sum(key in row for key in validation) < len(validation):
            raise FileFormatError(path, f"history[{i}] has only some of {list(validation)}")
    return summary


def follow_a_moved_run(folder: pathlib.Path, settings: DistillSettings) -> None:
    """Let a run resumed under another spelling of its path (moved, or named relative
    instead of absolute) keep its shards: the saved teacher names a policy by path,
    and so may the opponent (an exploiters' policy in the run folder); only those
    paths may differ."""
    path = folder / SETTINGS_FILE
    if not path.exists():
        return
    saved = read_settings(path)

    def tail(spec: str | None) -> tuple[str, ...] | None:
        return pathlib.Path(spec).parts[-2:] if spec else None

    changed = False
    saved_teacher = teacher_from_json(saved.get("teacher", ""))
    teacher = settings.teacher
    if (
        isinstance(saved_teacher, AZSpec)
        and isinstance(teacher, AZSpec)
        and saved_teacher != teacher
        and saved_teacher.with_policy(None) == teacher.with_policy(None)
    ):
        saved["teacher"], changed = teacher_json(teacher), True
    opponent = saved.get("opponent")
    if (
        opponent != settings.opponent
        and pathlib.Path(opponent or "").is_absolute()
        and tail(opponent) == tail(settings.opponent)
    ):
        saved["opponent"], changed = settings.opponent, True
    if changed:
        atomic_write_text(path, json.dumps(saved, indent=2))
