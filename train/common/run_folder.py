"""A training run's folder, the same for every trainer: made once, resumed, its
metrics, and its report with curves (every progress bar is the arena's).

Expert iteration, PPO and RLlib keep a run in one folder (the exploit command
keeps its own layout beside its target, and shares the report's charts):

    config.yaml     the resolved config (``start_run_folder``; ``--resume`` reads it back)
    state.json      the progress, the resume point (each trainer's own fields; PPO keeps
                    it in checkpoint/, RLlib in rllib_checkpoint/, beside their learners)
    metrics.csv     a row per generation, phase or iteration (``MetricsFile``)
    report.md       the summary, the trainer's tables, the final arena, the curves
                    and the config (``write_report``), with the curves' PNGs
    policy/         the exported policy

The rules are the same for all of them: a folder that holds a run is never
started over; every file is written atomically, so a run killed at any moment
resumes from what it last wrote; a row of metrics written again after a resume
replaces the rows at and after it; Ctrl-C saves and says how to continue
(``resume_hint``); a file that cannot be written stops the run in one line
naming it (``run_writes``).
"""

from __future__ import annotations

import csv
import datetime
import io
import os
import pathlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from jekyll_hyde_arena import evaluate
from jekyll_hyde_env.engine.variant import FULL, Variant
from jekyll_hyde_train.common.files import atomic_write_text, read_csv_rows, run_write_error

CONFIG_FILE = "config.yaml"
STATE_FILE = "state.json"
METRICS_FILE = "metrics.csv"


# --- the folder ------------------------------------------------------------------


def start_run_folder(
    run_dir: str | os.PathLike | None,
    name: str,
    config_yaml: str,
    holds_run: Callable[[pathlib.Path], bool] | None = None,
) -> pathlib.Path:
    """Make a new run's folder (``runs/<name>-<time>`` when ``run_dir`` is None) and
    write its ``config.yaml``; returns the folder.

    Args:
        run_dir: the folder to make (its parents too); None for
            ``runs/<name>-<YYYYmmdd-HHMMSS>`` under the working folder.
        name: the start of the folder's name when ``run_dir`` is None (the config's
            name, say).
        config_yaml: the resolved config's YAML text, written to ``config.yaml``.
        holds_run: recognises a run in a folder without ``config.yaml`` (a trainer's
            checkpoint); None recognises only ``config.yaml``.

    Returns:
        The run's folder.

    Raises:
        FileExistsError: the folder already holds a run (its ``config.yaml``, or
            what ``holds_run`` recognises), with the ``--resume`` that continues it.
        RunWriteError: the folder or its config cannot be written, naming the file.
    """
    if run_dir is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = os.path.join("runs", f"{name}-{stamp}")
    path = pathlib.Path(run_dir)
    if (path / CONFIG_FILE).exists() or (holds_run is not None and holds_run(path)):
        raise FileExistsError(
            f"{path} already holds a run; continue it with --resume {path}, "
            "or choose another --run-dir"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path / CONFIG_FILE, config_yaml)
    except OSError as error:
        raise run_write_error(error, path) from None
    return path


def run_config_file(run_dir: str | os.PathLike) -> pathlib.Path:
    """The ``config.yaml`` of the run ``--resume`` names.

    Args:
        run_dir: the run's folder.

    Returns:
        The path of its ``config.yaml``, which exists.

    Raises:
        FileNotFoundError: the folder holds no run (no ``config.yaml``).
    """
    path = pathlib.Path(run_dir) / CONFIG_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not a run folder (no {CONFIG_FILE})")
    return path


def saved_folder(run_dir: pathlib.Path, name: str, marker: str) -> pathlib.Path | None:
    """The folder ``name`` that ``files.replace_folder`` last swapped in whole (holding
    ``marker``), or the previous one, which it leaves in ``.<name>.old/`` when a crash
    falls between its two renames; None without either.

    Args:
        run_dir: the run's folder.
        name: the saved folder's name in it (``checkpoint``).
        marker: a file the saved folder holds once complete (``state.json``).

    Returns:
        ``run_dir/name`` when it holds ``marker``, else ``run_dir/.name.old`` when that
        does, else None.
    """
    for folder in (run_dir / name, run_dir / f".{name}.old"):
        if (folder / marker).exists():
            return folder
    return None


def resume_hint(run_dir: pathlib.Path) -> str:
    """The line a trainer prints when Ctrl-C stops it, after saving.

    Args:
        run_dir: the run's folder.

    Returns:
        ``interrupted: continue with: jekyll-hyde train --resume <run_dir>``.
    """
    return f"interrupted: continue with: jekyll-hyde train --resume {run_dir}"


@contextmanager
def run_writes(run_dir: pathlib.Path) -> Iterator[None]:
    """Turn an OSError raised by a run's writes (a full disk, say) into a one-line
    ``RunWriteError`` naming the file and how to continue; a missing or existing
    folder's own errors pass unchanged.

    Args:
        run_dir: the run's folder, named in the message's advice.

    Yields:
        Nothing: the ``with`` block runs inside.

    Raises:
        RunWriteError: an OSError other than ``FileExistsError`` and
            ``FileNotFoundError`` was raised in the block.
    """
    try:
        yield
    except (FileExistsError, FileNotFoundError):
        raise
    except OSError as error:
        raise run_write_error(error, run_dir) from None


# --- metrics ---------------------------------------------------------------------


@dataclass(frozen=True)
class MetricsFile:
    """What a trainer's ``metrics.csv`` holds: one row per ``key`` (a generation,
    the steps after a phase, an iteration), a column type for the columns that are
    not numbers, and the file's description for error messages."""

    key: str
    what: str
    columns: Mapping[str, type]

    def read(self, run_dir: pathlib.Path) -> list[dict[str, str]]:
        """The rows (none without a file), checked: a whole ``key`` in each, numbers in
        the other columns unless ``columns`` says otherwise (empty where not measured).

        Args:
            run_dir: the run's folder, holding ``metrics.csv`` or not.

        Returns:
            The rows in file order, each a dict of column name to its text.

        Raises:
            FileFormatError: naming the file and the first bad line.
        """
        path = pathlib.Path(run_dir) / METRICS_FILE
        if not path.exists():
            return []
        columns = {self.key: int, **self.columns}
        optional = tuple(name for name in columns if name != self.key)
        return read_csv_rows(
            path, self.what, columns, required=(self.key,), others=float, optional=optional
        )

    def add(self, run_dir: pathlib.Path, row: Mapping[str, Any], fields: Sequence[str]) -> None:
        """Add ``row`` to the file, rewritten atomically (a write cut short leaves no
        partial row); rows at or after its ``key`` go first, so a generation or phase
        run again after a resume replaces its row. Floats keep 6 significant digits.

        Args:
            run_dir: the run's folder.
            row: the new row, column name to value; it holds ``key``.
            fields: the file's columns, in order; values of other names are left out.

        Raises:
            FileFormatError: the rows already in the file are not valid (``read``).
        """
        key = int(row[self.key])
        rows: list[Mapping[str, Any]] = [r for r in self.read(run_dir) if int(r[self.key]) < key]
        rows.append({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
        text = io.StringIO()
        writer = csv.DictWriter(
            text, fieldnames=list(fields), extrasaction="ignore", lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        atomic_write_text(pathlib.Path(run_dir) / METRICS_FILE, text.getvalue())


# --- the report --------------------------------------------------------------------


FINAL_SEED = 777  # the final arena's deals, stated in the report

Series = tuple[str, Sequence[float], Sequence[float]]
"""One line of a chart: its label, x values and y values."""


def line_chart(
    out: pathlib.Path,
    name: str,
    series: Sequence[Series],
    xlabel: str,
    ylabel: str,
    title: str,
    ylim: tuple[float, float] | None = None,
    baseline: float | None = None,
    marker: str = "o",
) -> str | None:
    """Draw ``series`` into ``out/name`` (PNG); returns ``name``, or None with nothing to draw.

    Args:
        out: the folder to write the chart in.
        name: the PNG file's name (``score.png``).
        series: the lines, each (label, x values, y values); a line without points is
            left out.
        xlabel: the x axis's label.
        ylabel: the y axis's label.
        title: the chart's title.
        ylim: the y axis's (low, high); None to fit the data.
        baseline: a y value drawn as a dotted grey line (0.5 for an even score); None
            for none.
        marker: the points' matplotlib marker (``"o"``; ``""`` for none).

    Returns:
        ``name`` once written; None when no line has a point or matplotlib is not
        installed (the report then goes without the chart).
    """
    drawn = [line for line in series if len(line[1])]
    if not drawn:
        return None
    try:
        import matplotlib  # lazy: the train extra; imported only when a report is written
    except ImportError:  # no charts, the rest of the report all the same
        return None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after choosing the Agg backend above

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, xs, ys in drawn:
        ax.plot(list(xs), list(ys), marker=marker, label=label)
    if baseline is not None:
        ax.axhline(baseline, color="grey", linestyle=":")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def final_arena(
    run_dir: pathlib.Path,
    opponents: list[str],
    pairs: int,
    workers: int,
    variant: Variant = FULL,
) -> list[str]:
    """The report's final arena: duplicate matches of the run's policy against each
    opponent on the deals of ``FINAL_SEED``, as Markdown lines (also printed).

    Args:
        run_dir: the run's folder, played as the agent (its exported ``policy/``).
        opponents: the opponents' agent specs (``heuristic``, ``ismcts:200``).
        pairs: duplicate pairs of games per opponent.
        workers: worker processes for the games.
        variant: the version of the game the run trained on (RULES.md V1-V7).

    Returns:
        The section's lines: its heading, how to reproduce a row, and a table with a row
        per opponent (score, 95% interval, win rate as Jekyll and as Hyde); the table's
        rows are printed too.
    """
    lines = [
        "## Final arena",
        "",
        f"Duplicate pairs ({pairs} per opponent, deals from seed {FINAL_SEED}), 95% intervals "
        f"over pairs. Reproduce a row with `jekyll-hyde eval {run_dir} OPPONENT "
        f"--pairs {pairs} --seed {FINAL_SEED}"
        + ("" if variant == FULL else f" --variant {variant.spec()}")
        + "`.",
        "",
        "| opponent | score | 95% CI | as Jekyll | as Hyde |",
        "|---|---|---|---|---|",
    ]
    for opponent in opponents:
        report = evaluate(
            str(run_dir), opponent, pairs, seed=FINAL_SEED, workers=workers, variant=variant
        )
        lo, hi = report.score_ci
        jekyll = report.by_role["jekyll"]["win_rate"]
        hyde = report.by_role["hyde"]["win_rate"]
        lines.append(
            f"| {opponent} | {report.score:.3f} | [{lo:.3f}, {hi:.3f}] "
            f"| {jekyll:.3f} | {hyde:.3f} |"
        )
    print("\n".join(lines[-len(opponents) - 2 :]))
    return lines


def write_report(
    run_dir: pathlib.Path,
    summary: list[str],
    sections: list[str],
    arena: tuple[list[str], int, int],
    images: list[str],
    config_yaml: str,
    curves_title: str = "Curves",
    variant: Variant = FULL,
) -> str:
    """Write ``run_dir/report.md`` atomically; returns its text.

    Args:
        run_dir: the run's folder; the report is its ``report.md``, titled with its name.
        summary: the bullet lines under the title.
        sections: Markdown lines between the summary and the final arena.
        arena: the final arena's opponents, pairs per opponent and worker processes.
        images: chart files in ``run_dir`` (``line_chart``'s names).
        config_yaml: the run's resolved config.
        curves_title: the heading of the charts' section.
        variant: the version of the game the run trained on, which the final arena plays.

    Returns:
        The report's Markdown text.
    """
    opponents, pairs, workers = arena
    lines = [f"# Run {run_dir.name}", "", *summary, ""]
    if sections:
        lines += [*sections, ""]
    lines += final_arena(run_dir, opponents, pairs, workers, variant)
    if images:
        lines += ["", f"## {curves_title}", ""] + [f"![{name}]({name})" for name in images]
    lines += ["", "## Config", "", "```yaml", config_yaml.rstrip(), "```", ""]
    text = "\n".join(lines)
    atomic_write_text(run_dir / "report.md", text)
    return text
