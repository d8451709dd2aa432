"""The import names ``agents`` and ``train`` of earlier releases, kept for one release.

The project's agents and its training code are imported as ``jekyll_hyde_agents`` and
``jekyll_hyde_train``. Earlier releases called them ``agents`` and ``train``: names that
many RL projects give folders of their own, so that an installed package of that name
would shadow the user's, or the user's ours. The old names now answer only as a last
resort: a finder placed *last* on ``sys.meta_path`` provides ``agents`` or ``train``
only when nothing else on the path does, so a project's own ``agents`` or ``train``
package always wins. When it answers, it warns (``DeprecationWarning``) and hands out
the project's module itself, not a copy, and the submodules follow (``agents.rollout``
is ``jekyll_hyde_agents.rollout``). Importing ``jekyll_hyde_env`` installs the finder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence

LEGACY_NAMES = {"agents": "jekyll_hyde_agents", "train": "jekyll_hyde_train"}
"""The old import name of each package and the name to import instead."""


def _new_name(fullname: str) -> str | None:
    """``jekyll_hyde_agents.rollout`` for ``agents.rollout``; None for other names."""
    top, dot, rest = fullname.partition(".")
    new = LEGACY_NAMES.get(top)
    if new is None:
        return None
    return new + dot + rest


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module of its new name, with a warning."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        if "." not in name:
            warnings.warn(
                f"the import name {name!r} is deprecated and goes in the next release: "
                f"import {self.new!r} instead",
                DeprecationWarning,
                stacklevel=2,
            )
        # The import system hands out whatever sys.modules holds under the name once
        # this returns: the project's own module, so that both names share one module.
        sys.modules[name] = importlib.import_module(self.new)


class _LastResort(importlib.abc.MetaPathFinder):
    """Answers for a bare old name (``agents``) when no other finder has."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if "." in fullname:
            return None
        new = _new_name(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _Alias(new))


class _Submodules(importlib.abc.MetaPathFinder):
    """Answers first for ``agents.x`` once ``agents`` is the project's own package.

    Without it, the path finder would load ``agents/x.py`` a second time under the
    old name, and the two copies would not share their state.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, dot, _ = fullname.partition(".")
        new = _new_name(fullname)
        if not dot or new is None:
            return None
        parent = sys.modules.get(top)
        if parent is None or parent is not sys.modules.get(LEGACY_NAMES[top]):
            return None  # ``agents`` is somebody else's package: leave it alone
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the two finders on ``sys.meta_path``, once."""
    if not any(isinstance(finder, _LastResort) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Submodules())
        sys.meta_path.append(_LastResort())
