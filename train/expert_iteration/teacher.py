"""The search that labels games (the teacher): as settings name it, as it is
recorded, and as it travels to the workers.

A teacher is ISMCTS by name (``ismcts:N``, ``ismcts:Xs``) or network-guided
search as an ``AZSpec`` (simulations, settings and the path of its policy). A
command line's ``az:...`` is parsed into an ``AZSpec`` once, by ``parse_teacher``;
expert iteration builds its specs directly. Settings files record a spec as its
JSON (``teacher_json``); a name, or the ``az:...`` text older runs recorded, is
read back by ``teacher_from_json``.

Workers may run on other machines, so a teacher travels with the files of its
policy (``ShippedTeacher``): no worker reads the run folder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import tempfile
from typing import Any

from jekyll_hyde_agents import AZAgent, AZSpec, ISMCTSAgent, make_agent, parse_az_spec
from jekyll_hyde_agents.policy_file import resolve_policy_path
from jekyll_hyde_agents.policy_format import METADATA_FILE, WEIGHTS_FILE

Teacher = str | AZSpec
"""ISMCTS by name, or network-guided search by its typed spec."""


def parse_teacher(text: str) -> Teacher:
    """The teacher a command line (or an older run's record) names: ``az:...`` as an
    ``AZSpec`` (its policy the champion unless ``policy=`` names one), any other
    name as it is (``make_agent`` builds it).

    Args:
        text: the teacher's name: ``az:...`` (``az:200,policy=RUN``), or any agent
            spec (``ismcts:1000``).

    Returns:
        An ``AZSpec`` for an ``az`` name (nothing is loaded), else ``text`` itself,
        unchecked.

    Raises:
        ValueError: an ``az:`` name that does not parse, naming the problem.
    """
    kind, colon, argument = text.partition(":")
    if kind == "az":
        return parse_az_spec(argument if colon else None)
    return text


def teacher_json(teacher: Teacher) -> str | dict[str, Any]:
    """The teacher as a settings file records it: a spec's JSON, or the name.

    Args:
        teacher: the teacher, a name or an ``AZSpec``.

    Returns:
        ``AZSpec.to_json()`` for a spec, else the name; ``teacher_from_json`` reads it
        back.
    """
    return teacher.to_json() if isinstance(teacher, AZSpec) else teacher


def teacher_from_json(value: Any) -> Teacher:
    """A recorded teacher (``teacher_json``, or an older run's ``az:...`` text).

    Args:
        value: the recorded value: a spec's JSON (a dict) or a name (a string).

    Returns:
        The teacher: an ``AZSpec`` for a spec's JSON or an ``az:`` name, else the name.

    Raises:
        ValueError: neither a name nor a spec's JSON, naming the problem.
    """
    if isinstance(value, dict):
        return AZSpec.from_json(value)
    if isinstance(value, str):
        return parse_teacher(value)
    raise ValueError(f"a teacher is a name or an az spec's JSON, got {type(value).__name__}")


def teacher_label(teacher: Teacher) -> str:
    """How reports name the teacher.

    Args:
        teacher: the teacher, a name or an ``AZSpec``.

    Returns:
        The name, or the spec's ``name`` (``az:200 policy=...``).
    """
    return teacher.name if isinstance(teacher, AZSpec) else teacher


def build_teacher(teacher: Teacher) -> Any:
    """The teacher's agent (a search agent when the settings are valid).

    Args:
        teacher: the teacher, a name (built by ``make_agent``) or an ``AZSpec``.

    Returns:
        The agent, ready to act.

    Raises:
        ValueError: a name that ``make_agent`` does not know.
        PolicyFileError: a spec whose policy cannot be read or has no value head.
    """
    return teacher.build() if isinstance(teacher, AZSpec) else make_agent(teacher)


@dataclasses.dataclass(frozen=True)
class ShippedTeacher:
    """A teacher as it travels to the workers: its spec or name, and the files of
    its spec's policy, so that no worker reads the run folder.

    Attributes:
        teacher: the settings' teacher (``DistillSettings.teacher``).
        metadata: the policy's ``policy.json``, or empty when the teacher names no
            policy file (ISMCTS, or the shipped champion).
        weights: the policy's ``policy.npz``, or empty.
        digest: names the teacher and its policy's contents (a worker's cache key).
    """

    teacher: Teacher
    metadata: bytes = b""
    weights: bytes = b""
    digest: str = ""


def ship_teacher(teacher: Teacher) -> ShippedTeacher:
    """The teacher with its policy's files read in (``unpack_teacher`` makes it).

    Args:
        teacher: the teacher, a name or an ``AZSpec``.

    Returns:
        The ``ShippedTeacher``: for a spec naming a policy, its ``policy.json`` and
        ``policy.npz`` bytes; for the others none; and a SHA-256 digest of the teacher's
        JSON and those bytes.
    """
    metadata = weights = b""
    if isinstance(teacher, AZSpec) and teacher.policy is not None:
        meta_path = resolve_policy_path(teacher.policy)
        metadata = meta_path.read_bytes()
        weights = meta_path.with_name(WEIGHTS_FILE).read_bytes()
    digest = hashlib.sha256()
    named = json.dumps(teacher_json(teacher), sort_keys=True).encode()
    for part in (named, metadata, weights):
        digest.update(len(part).to_bytes(8, "little") + part)
    return ShippedTeacher(teacher, metadata, weights, digest.hexdigest())


_TEACHER: list[Any] = [None, None]  # this process's (digest, agent) of its last teacher


def unpack_teacher(shipped: ShippedTeacher) -> ISMCTSAgent | AZAgent:
    """The shipped teacher, made once per process and kept for the next shards.

    Its policy's files go into a temporary folder of this machine for the
    policy reader's checks, which is removed once the network is loaded.

    Args:
        shipped: the teacher as ``ship_teacher`` made it.

    Returns:
        The search agent; the same object as the last call's when the digest is the
        same.
    """
    if _TEACHER[0] == shipped.digest:
        return _TEACHER[1]
    teacher = shipped.teacher
    if not shipped.metadata:
        agent = build_teacher(teacher)
    else:
        assert isinstance(teacher, AZSpec)  # only a spec's policy is shipped
        with tempfile.TemporaryDirectory(prefix="jekyll-hyde-teacher-") as folder:
            pathlib.Path(folder, METADATA_FILE).write_bytes(shipped.metadata)
            pathlib.Path(folder, WEIGHTS_FILE).write_bytes(shipped.weights)
            agent = teacher.with_policy(folder).build()
    _TEACHER[:] = [shipped.digest, agent]
    return agent
