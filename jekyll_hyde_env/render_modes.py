"""The render modes the environments offer, and the check of a requested one.

``"ansi"`` (the table as text) and ``"human"`` (the text, printed) need nothing.
``"rgb_array"`` draws a picture with Pillow, which comes with the ``render`` extra
rather than with the core install, whose users train on observations and need no
pictures. So ``rgb_array`` is advertised in an environment's
``metadata["render_modes"]`` only where Pillow can be imported: tools that try
every advertised mode (Gymnasium's ``check_env``, PettingZoo's ``render_test``)
then pass on a core install, and asking for ``rgb_array`` without Pillow says what
to install. Pillow is looked up, not imported, so that importing an environment
stays light.
"""

from __future__ import annotations

import importlib.util

TEXT_MODES = ("human", "ansi")
PICTURE_MODE = "rgb_array"
INSTALL_PILLOW = 'pip install "jekyll-hyde-env[render]"'


def pillow_installed() -> bool:
    """Whether Pillow can be imported (found on the path, not imported).

    Returns:
        True when the ``PIL`` package is found.
    """
    return importlib.util.find_spec("PIL") is not None


def render_modes() -> list[str]:
    """The modes to advertise: the text modes, and ``rgb_array`` where Pillow is.

    Returns:
        ``["human", "ansi"]``, with ``"rgb_array"`` after them when Pillow is
        installed.
    """
    return [*TEXT_MODES, *([PICTURE_MODE] if pillow_installed() else [])]


def check_render_mode(render_mode: str | None, advertised: list[str]) -> None:
    """Refuse a render mode an environment does not offer, naming the allowed ones.

    Args:
        render_mode: the mode asked for, or None for no rendering.
        advertised: the modes the environment offers (its
            ``metadata["render_modes"]``).

    Raises:
        ValueError: ``render_mode`` is neither None nor one of ``advertised``; for
            ``rgb_array`` without Pillow, the message says how to install it.
    """
    if render_mode is None or render_mode in advertised:
        return
    if render_mode == PICTURE_MODE:
        raise ValueError(
            f'render_mode "rgb_array" draws with Pillow, which is not installed: {INSTALL_PILLOW}'
        )
    raise ValueError(
        f"render_mode {render_mode!r} is not supported; use None or one of {advertised}"
    )
