"""MkDocs hook: the configs page lists every shipped config from the config files themselves.

Each ``configs/<folder>/*.yaml`` opens with a comment saying what the config does and how long it
takes. The page ``training/configs.md`` holds the marker ``<!-- configs -->``; this hook
replaces it with a table of those headers and, per config, the whole file, so the page
cannot drift from the configs.
"""

from __future__ import annotations

import pathlib

import yaml

MARKER = "<!-- configs -->"
CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def header(text: str) -> str:
    """The opening comment of a config, as one paragraph."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def kind(text: str, name: str) -> str:
    """What runs the config: its ``algorithm``, or the command that reads it."""
    data = yaml.safe_load(text) or {}
    if "algorithm" in data:
        return f"`algorithm: {data['algorithm']}`"
    if name == "exploit":
        return "`jekyll-hyde exploit`"
    return "benchmarks"


def configs_markdown() -> str:
    rows = ["| config | runs with | what it does, how long it takes |", "|---|---|---|"]
    sections = []
    for path in sorted(CONFIGS.glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        about = header(text)
        name = f"{path.parent.name}/{path.stem}"
        anchor = name.replace("/", "-")
        if not about:
            raise ValueError(f"{name}.yaml has no header comment saying what it does")
        rows.append(f"| [`{name}`](#{anchor}) | {kind(text, path.parent.name)} | {about} |")
        sections.append(
            f"## {name} {{#{anchor}}}\n\n{about}\n\n"
            f'??? example "configs/{name}.yaml"\n\n'
            + "    ```yaml\n"
            + "".join(f"    {line}\n" if line else "\n" for line in text.splitlines())
            + "    ```\n"
        )
    return "\n".join(rows) + "\n\n" + "\n".join(sections)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' signature
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, configs_markdown())
