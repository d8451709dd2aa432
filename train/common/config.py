"""Loading training configs: YAML files read into typed sections that pydantic checks.

Each algorithm declares its config beside its code: ``jekyll_hyde_train.ppo.config``
(``algorithm: ppo``), ``jekyll_hyde_train.expert_iteration.config``
(``algorithm: expert_iteration``, the default), ``jekyll_hyde_train.ppo.rllib_config``
(``algorithm: rllib``) and ``jekyll_hyde_train.exploit.config`` (the exploit
command's settings). A config class is a dataclass whose fields are its sections;
a section is a dataclass declared with ``config_checks.section``, which holds every
key's type, default and meaning. A YAML file only overrides those defaults.

``load_config`` reads a file, applies ``--set section.key=value`` overrides (each
value parsed as YAML), builds each section (pydantic validates every value's type
as the section is built) and runs the sections' ``check``, which refuses
impossible values. Every refusal is a ``ConfigError`` of one line that names the
key as the file spells it (``ppo.batch_size``) and what is allowed. Numbers may be
written ``3.0e-4`` or ``3e-4``, ``1000000`` or ``1e6``: the YAML reader takes a
number with an exponent as a number (PyYAML alone reads ``1e6`` as a string), and
any whole number as an integer, which a float setting accepts too.

Pydantic is the validating library: it checks the declared types of plain
dataclasses, so that every default stays written once, in the class, with its
docstring, and ``dataclasses.replace`` and ``asdict`` keep working; its strict mode
refuses ``true`` for a number and ``1`` for a text. YAML stays PyYAML's safe
loader, without aliases and refusing a key given twice.

A config is named by a path or by the name of a shipped config
(``resolve_config``): the repository's ``configs/`` folder, a folder per
algorithm (``configs/expert_iteration/default.yaml``, ``configs/ppo/smoke.yaml``,
...), installed with the package as ``jekyll_hyde_train.configs``. ``ppo/smoke``
names a config; ``ppo`` names that folder's ``default``; a name alone is expert
iteration's (``smoke``, ``long``), and ``ppo_smoke`` is ``ppo/smoke``.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
import re
import typing
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from jekyll_hyde_train.common.config_checks import (
    SECTION_RULES,
    ConfigError,
    register_sections,
)
from jekyll_hyde_train.common.files import (
    MAX_DEPTH,
    FileFormatError,
    nesting_depth,
    one_line,
    read_text_file,
)

ALGORITHM_NAMES = ("expert_iteration", "ppo", "rllib")
"""Every algorithm a config may name in its ``algorithm`` key."""
PPO_SECTIONS = ("env", "ppo", "selfplay")
"""The sections that make a config without an ``algorithm`` key PPO's."""

_SCHEMAS: dict[str, type] = {}


def register_algorithm(schema: type) -> None:
    """Make ``schema`` (a config class with an ``ALGORITHM`` name) known to the loader,
    which then names its sections in messages and refuses them in other algorithms'
    configs. Each algorithm's config module registers its class as it is imported.

    Args:
        schema: the config class: a dataclass whose fields are its sections, with an
            ``ALGORITHM`` class attribute (one of ``ALGORITHM_NAMES``).
    """
    _SCHEMAS[schema.ALGORITHM] = schema  # type: ignore[attr-defined]
    register_sections(_section_types(schema))


def _section_types(schema: type) -> dict[str, type]:
    """The sections of a config class: field name to section class."""
    hints = typing.get_type_hints(schema)
    return {f.name: hints[f.name] for f in dataclasses.fields(schema)}


def algorithm_of(data: Any, source: str = "config") -> str:
    """The algorithm a raw config names, or the one its sections imply.

    Args:
        data: the config's contents as read from YAML (a dict of sections, or anything).
        source: what to call the config in a message (its path).

    Returns:
        The ``algorithm`` key's value; without one, ``"ppo"`` when a section of
        ``PPO_SECTIONS`` is present and ``"expert_iteration"`` otherwise (also for data
        that is not a mapping).

    Raises:
        ConfigError: ``algorithm`` is not one of ``ALGORITHM_NAMES``.
    """
    if not isinstance(data, dict):
        return "expert_iteration"
    algorithm = data.get("algorithm")
    if algorithm is None:
        return "ppo" if any(name in data for name in PPO_SECTIONS) else "expert_iteration"
    if not isinstance(algorithm, str) or algorithm not in ALGORITHM_NAMES:
        raise ConfigError(
            f"{source}: algorithm {algorithm!r} is not one of {list(ALGORITHM_NAMES)}"
        )
    return algorithm


def shipped_configs_dir() -> pathlib.Path:
    """The folder of the shipped configs: ``train/configs`` in an installed package (package
    data taken from the repository's ``configs/``), the repository's ``configs/`` in a checkout.

    Returns:
        The folder's path (it may be missing when the package was installed without
        its configs).
    """
    here = pathlib.Path(__file__).resolve().parents[1]  # the package jekyll_hyde_train
    installed = here / "configs"
    return installed if installed.is_dir() else here.parent / "configs"


def shipped_config_names() -> list[str]:
    """Every shipped config as ``FOLDER/NAME``: ``configs/<algorithm>/<name>.yaml`` (and
    the benchmarks' and the exploit command's settings in folders of their own).

    Returns:
        The names, sorted, without ``.yaml`` (``["expert_iteration/default", ...,
        "ppo/smoke", ...]``); empty when there are no shipped configs.
    """
    root = shipped_configs_dir()
    paths = root.glob("*/*.yaml")
    return sorted(path.relative_to(root).with_suffix("").as_posix() for path in paths)


def shipped_config(name: str) -> pathlib.Path | None:
    """The shipped config ``name`` means, or None. In order: ``FOLDER/NAME``
    (``ppo/smoke``); a folder alone, its ``default`` (``ppo``); a name alone, expert
    iteration's, the default algorithm (``smoke``); ``FOLDER_NAME`` (``ppo_smoke``).

    Args:
        name: the config's name, without ``.yaml``.

    Returns:
        The path of the shipped YAML file, or None when ``name`` means none.
    """
    names = set(shipped_config_names())
    candidates = [name, f"{name}/default", f"expert_iteration/{name}"]
    folder, _, rest = name.partition("_")
    if rest:
        candidates.append(f"{folder}/{rest}")
    for candidate in candidates:
        if candidate in names:
            return shipped_configs_dir() / f"{candidate}.yaml"
    return None


def resolve_config(spec: str | pathlib.Path) -> pathlib.Path:
    """The config file ``spec`` names: a path that exists wins; otherwise a shipped
    config's name (``shipped_config``), with or without ``.yaml`` and with or without
    the repository's ``configs/`` before it (``configs/ppo/smoke.yaml`` works outside
    the repository too).

    Args:
        spec: a path to a YAML file, or a shipped config's name (``ppo/smoke``).

    Returns:
        The path of the config file.

    Raises:
        ConfigError: neither such a file nor a shipped config; the message lists the names.
    """
    path = pathlib.Path(spec)
    if path.exists():
        return path
    names = shipped_config_names()
    shipped = ", ".join(names) or "none (the package was installed without them)"
    parts = path.with_suffix("").parts if path.suffix == ".yaml" else path.parts
    if parts and parts[0] == "configs":
        parts = parts[1:]
    if path.suffix in ("", ".yaml") and 1 <= len(parts) <= 2 and not path.is_absolute():
        found = shipped_config("/".join(parts))
        if found is not None:
            return found
        raise ConfigError(
            f"cannot read config {str(spec)!r}: no such file, nor a shipped config of that "
            f"name; shipped configs: {shipped}"
        )
    raise ConfigError(
        f"cannot read config {str(spec)!r}: no such file (shipped configs, by name: {shipped})"
    )


CONFIG_WHAT = "a training config (YAML)"


class _ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases, refusing a key given twice in one
    mapping (PyYAML would keep the last silently), and reading numbers as a config
    means them: ``1e6`` and ``3e-4`` are numbers (YAML 1.1 wants a dot), and a whole
    number is an integer (``1e6``, ``2.0``), which float settings accept too. A
    config never needs aliases, and a few nested ones can stand for billions of
    values (a "billion laughs" file)."""

    def construct_yaml_float(self, node: Any) -> Any:
        value = super().construct_yaml_float(node)
        if value == value and abs(value) != float("inf") and value == int(value):
            return int(value)
        return value

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in a config", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: PyYAML's own message names it
                break
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice (lines {first.start_mark.line + 1} "
                    f"and {key_node.start_mark.line + 1}); keep one",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep)


_ConfigLoader.add_constructor("tag:yaml.org,2002:float", _ConfigLoader.construct_yaml_float)
_ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _parse_yaml(text: str) -> Any:
    """``text`` read by ``_ConfigLoader``.

    Raises:
        yaml.YAMLError: invalid YAML, an alias, a key given twice.
        ValueError: an integer of more digits than Python reads (4,300).
        RecursionError: nesting deeper than Python's recursion limit.
    """
    return yaml.load(text, Loader=_ConfigLoader)  # a SafeLoader: no Python objects


def _read_yaml(spec: str | pathlib.Path) -> tuple[Any, pathlib.Path]:
    """A config's raw YAML contents and the file they came from (``resolve_config``).

    Raises:
        ConfigError: the file is unreadable, not UTF-8, not YAML, uses aliases or
            nests deeper than ``MAX_DEPTH``; the message names the file.
    """
    path = resolve_config(spec)
    try:
        text = read_text_file(path, CONFIG_WHAT)
    except FileFormatError as error:
        raise ConfigError(str(error)) from None
    try:
        data = _parse_yaml(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({one_line(str(error))})") from None
    except ValueError as error:  # an integer of more digits than int() reads
        raise ConfigError(
            f"{path}: not readable YAML ({one_line(str(error)).split(';')[0]})"
        ) from None
    except RecursionError:
        data, depth = None, MAX_DEPTH + 1
    else:
        depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise ConfigError(f"{path}: nested deeper than {MAX_DEPTH} levels; expected {CONFIG_WHAT}")
    return data, path


def read_algorithm(path: str | pathlib.Path) -> str:
    """The algorithm of a config (``algorithm_of`` its contents), by path or shipped name.

    Args:
        path: the config's path or shipped name (``resolve_config``).

    Returns:
        One of ``ALGORITHM_NAMES``.

    Raises:
        ConfigError: no such config, a file that is not readable YAML, or an unknown
            ``algorithm``.
    """
    data, path = _read_yaml(path)
    return algorithm_of(data, str(path))


def _check_algorithm(data: dict[str, Any], schema: Any, source: str) -> None:
    """Refuse a config naming another algorithm, or holding another algorithm's sections."""
    expected = getattr(schema, "ALGORITHM", None)
    if expected is None:
        if "algorithm" in data:
            raise ConfigError(f"{source}: this config takes no 'algorithm' key")
        return
    named = data.pop("algorithm", expected)
    if named != expected:
        raise ConfigError(
            f"{source}: algorithm {named!r} here, but this is a {expected!r} config; "
            f"algorithms: {list(ALGORITHM_NAMES)}"
        )
    own = set(_section_types(schema))
    others = [
        (name, other)
        for other, cls in _SCHEMAS.items()
        if other != expected
        for name in _section_types(cls)
        if name in data and name not in own
    ]
    if others:
        raise ConfigError(
            f"{source}: the config mixes {expected} and other algorithms' keys: sections "
            + ", ".join(f"'{name}' ({other})" for name, other in others)
            + f" do not belong to algorithm '{expected}'"
        )


_KINDS = {
    "int_type": "int",
    "int_from_float": "int",
    "int_parsing": "int",
    "float_type": "float",
    "float_parsing": "float",
    "string_type": "str",
    "bool_type": "bool",
    "bool_parsing": "bool",
    "list_type": "list",
    "dict_type": "dict",
    "tuple_type": "tuple",
}
"""Pydantic's error types, as the declared type they stand for."""


def _key(prefix: str, location: tuple[Any, ...]) -> str:
    """``prefix`` and a pydantic error location as the file spells a key: ``a.b[0]``."""
    key = prefix
    for part in location:
        if isinstance(part, int):
            key += f"[{part}]"
        elif part not in ("function-after", "function-before", "function-plain"):
            key += f".{part}" if key else str(part)
    return key


def _refusal(error: ValidationError, prefix: str, cls: Any = None) -> ConfigError:
    """The first problem pydantic found, as a one-line ``ConfigError`` naming the key."""
    first = error.errors()[0]
    key = _key(prefix, first["loc"])
    value = first.get("input")
    if first["type"] == "unexpected_keyword_argument" and cls is not None:
        allowed = [f.name for f in dataclasses.fields(cls)]
        return ConfigError(f"unknown key '{key}'; allowed keys in '{prefix}': {allowed}")
    if first["type"] == "finite_number":
        return ConfigError(f"{key} must be a finite number, got {value!r}")
    kind = _KINDS.get(first["type"])
    if kind is not None:
        return ConfigError(f"{key} must be of type {kind}, got {value!r} ({type(value).__name__})")
    return ConfigError(f"{key}: {one_line(first['msg'])}, got {value!r}")


@functools.lru_cache(maxsize=64)
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind, config=SECTION_RULES)


def validate_value(key: str, value: Any, kind: Any) -> Any:
    """``value`` checked as the declared type ``kind`` (pydantic, strict), or a
    ``ConfigError`` naming ``key``; for values kept in loosely typed fields (a stage
    of expert iteration) that take a declared field's type.

    Args:
        key: the key as the file spells it (``stages[0].simulations``), for the message.
        value: the value read from the config.
        kind: the declared type (``int``, ``float | None``, ...).

    Returns:
        The value as pydantic validated it.

    Raises:
        ConfigError: ``value`` is not of type ``kind``; the message names ``key``.
    """
    try:
        return _adapter(kind).validate_python(value)
    except ValidationError as error:
        raise _refusal(error, key) from None


def _build_section(name: str, cls: type, values: dict[str, Any], source: str) -> Any:
    """Section ``name`` of class ``cls`` from its keys (defaults fill the rest)."""
    allowed = [f.name for f in dataclasses.fields(cls)]
    for key in values:
        if key not in allowed:
            moved = getattr(cls, "RENAMED", {}).get(key)
            if moved is not None:
                raise ConfigError(f"{source}: '{name}.{key}' is now {moved}")
            raise ConfigError(
                f"{source}: unknown key '{name}.{key}'; allowed keys in '{name}': {allowed}"
            )
    try:
        return cls(**{str(key): value for key, value in values.items()})
    except ValidationError as error:
        raise _refusal(error, name, cls) from None


def from_dict(data: Any, source: str = "config", *, schema: Any) -> Any:
    """Build and check a config of class ``schema`` from nested dicts (its defaults
    fill what is missing): each section is built, its values validated by pydantic,
    then the config's ``check`` refuses impossible values.

    Args:
        data: the config's sections, a mapping of section name to a mapping of keys
            (None for all defaults).
        source: what to call the config in a message (its path).
        schema: the config class to build (a dataclass whose fields are its sections).

    Returns:
        The checked config, an instance of ``schema``.

    Raises:
        ConfigError: data that is not a mapping, an unknown section or key, a value of
            the wrong type, or an impossible value (``check``).
    """
    section_types = _section_types(schema)
    register_sections(section_types)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a config is a mapping of sections {list(section_types)}")
    unknown = sorted(map(str, set(data) - set(section_types)))
    if unknown:
        raise ConfigError(f"{source}: unknown sections {unknown}; allowed: {list(section_types)}")
    sections = {}
    for name, cls in section_types.items():
        values = data.get(name) or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: section {name!r} must be a mapping")
        sections[name] = _build_section(name, cls, values, source)
    config = schema(**sections)
    config.check()
    return config


def _check_override_keys(overrides: list[str], schema: Any) -> None:
    """Name a ``--set`` that targets no section or key as --set's mistake, not the file's."""
    sections = {f.name: typing.get_type_hints(schema)[f.name] for f in dataclasses.fields(schema)}
    for item in overrides:
        path = item.partition("=")[0]
        section, _, key = path.partition(".")
        if section not in sections:
            raise ConfigError(
                f"--set {item!r}: unknown section {section!r}; sections: {list(sections)}"
            )
        allowed = [f.name for f in dataclasses.fields(sections[section])]
        moved = getattr(sections[section], "RENAMED", {}).get(key)
        if moved is not None:
            raise ConfigError(f"--set {item!r}: '{section}.{key}' is now {moved}")
        if key and key not in allowed:
            raise ConfigError(
                f"--set {item!r}: unknown key '{section}.{key}'; "
                f"allowed keys in '{section}': {allowed}"
            )


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to raw config data.

    Args:
        data: the config's contents as read from YAML; it is not changed (its
            sections are copied).
        overrides: ``--set`` items, each ``section.key=value`` (``ppo.n_epochs=8``).

    Returns:
        A copy of ``data`` with each override's value set, in order (a later one wins).

    Raises:
        ConfigError: an item not of the form ``section.key=value``, a value that is not
            valid YAML or nests deeper than ``MAX_DEPTH``, or a section that is not a
            mapping.
    """
    # Sections that are not mappings are left for from_dict to name.
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in (data or {}).items()}
    for item in overrides:
        path, sep, text = item.partition("=")
        section, dot, key = path.partition(".")
        if not sep or not dot or not key:
            raise ConfigError(f"--set {item!r}: expected section.key=value, e.g. ppo.n_epochs=8")
        try:
            value = _parse_yaml(text)
        except (yaml.YAMLError, ValueError, RecursionError) as error:
            problem = one_line(str(error))
            if isinstance(error, ValueError):  # an integer of more digits than int() reads
                problem = problem.split(";")[0]
            elif isinstance(error, RecursionError):
                problem = "nested too deeply"
            raise ConfigError(
                f"--set {item[:80]!r}: the value is not valid YAML ({problem})"
            ) from None
        if nesting_depth(value) > MAX_DEPTH:
            raise ConfigError(f"--set {item[:80]!r}: the value nests deeper than {MAX_DEPTH}")
        target = data.setdefault(section, {})
        if target is None:
            target = data[section] = {}
        if not isinstance(target, dict):
            raise ConfigError(f"--set {item!r}: section {section!r} is not a mapping")
        target[key] = value
    return data


def load_config(
    path: str | pathlib.Path, overrides: list[str] | None = None, *, schema: Any
) -> Any:
    """Load a YAML config (a file, or a shipped config's name: ``resolve_config``), apply
    overrides and check everything.

    Args:
        path: the config's path or shipped name (``resolve_config``).
        overrides: ``--set`` items, each ``section.key=value``; None for none.
        schema: the config class to build (a dataclass whose fields are its sections).

    Returns:
        The checked config, an instance of ``schema``.

    Raises:
        ConfigError: no such config, a file that is not readable YAML or not a mapping,
            another algorithm's config or sections, a bad ``--set``, or a refused key or
            value; the message names the file (and the overrides).
    """
    data, path = _read_yaml(path)
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: a config is a mapping of sections")
    data = apply_overrides(data or {}, overrides or [])
    _check_algorithm(data, schema, str(path))
    _check_override_keys(overrides or [], schema)
    try:
        return from_dict(data, str(path), schema=schema)
    except ConfigError as error:  # a value's own message: say which file (and --set) gave it
        if str(error).startswith(f"{path}:"):
            raise
        where = f"{path} with --set {' '.join(overrides)}" if overrides else str(path)
        raise ConfigError(f"{where}: {error}") from None


def dump_config(config: Any) -> str:
    """YAML text of a config, floats with a dot and a signed exponent where small or large.

    Args:
        config: a config (a dataclass of section dataclasses, as ``load_config`` returns).

    Returns:
        The YAML text: ``algorithm`` first when the config class names one, then every
        section with every key, in declaration order; ``load_config`` reads it back.
    """

    class Dumper(yaml.SafeDumper):
        pass

    def represent_float(dumper: yaml.SafeDumper, value: float) -> yaml.Node:
        text = repr(value)
        if "e" in text or "E" in text:
            mantissa, exponent = f"{value:.6e}".split("e")
            mantissa = mantissa.rstrip("0")
            mantissa += "0" if mantissa.endswith(".") else ""
            text = f"{mantissa}e{exponent[0]}{exponent[1:].lstrip('0') or '0'}"
        return dumper.represent_scalar("tag:yaml.org,2002:float", text)

    Dumper.add_representer(float, represent_float)
    data = dataclasses.asdict(config)
    algorithm = getattr(config, "ALGORITHM", None)
    if algorithm is not None:
        data = {"algorithm": algorithm, **data}
    return yaml.dump(data, Dumper=Dumper, sort_keys=False)
