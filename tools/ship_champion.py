"""Ship a champion: copy one generation of an expert-iteration run into the package.

``RUN [--generation N] [--note TEXT]`` copies one generation's policy of an
expert-iteration run folder into the package (``agents/champion_policy/``),
with the weights unchanged and its ``policy.json`` provenance extended by the
run's record: the generation, how it was chosen, the games and decisions it
was fit on, its held-out losses and the run's per-generation metrics, and, for a
run begun from a saved policy, which policy that was (``start_policy``). The
default generation is the one that scored best against ``ismcts:1000`` in the
run's own evaluation (ties go to the later one). Those deals come from the
run's seeds: measure the shipped champion afterwards on other seeds with
``python benchmarks/champion.py``, which writes its results page.

    python tools/ship_champion.py runs/long [--generation 7] [--note TEXT]
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import shutil

import yaml

from jekyll_hyde_agents.champion import CHAMPION_DIR
from jekyll_hyde_agents.policy_file import read_policy, weights_sha256
from jekyll_hyde_agents.policy_format import METADATA_FILE, WEIGHTS_FILE
from jekyll_hyde_train.common.files import atomic_write_text
from jekyll_hyde_train.expert_iteration.generation import START_POLICY

SELECTION_KEY = "score_vs_ismcts:1000"
MAX_BYTES = 8 * 1024 * 1024  # the one binary in git stays small


def _metrics(run: pathlib.Path) -> list[dict[str, str]]:
    path = run / "metrics.csv"
    if not path.is_file():
        raise SystemExit(f"error: {run} has no metrics.csv; is it an expert-iteration run folder?")
    with path.open() as file:
        return list(csv.DictReader(file))


def choose_generation(rows: list[dict[str, str]]) -> int:
    """The generation with the best score against ``ismcts:1000``; ties go to the later one."""
    if not rows or SELECTION_KEY not in rows[0]:
        raise SystemExit(f"error: metrics.csv has no {SELECTION_KEY!r} column to choose by")
    best = max(rows, key=lambda row: (float(row[SELECTION_KEY]), int(row["generation"])))
    return int(best["generation"])


def start_policy(run: pathlib.Path) -> dict | None:
    """Where a run that began from a saved policy began: the policy its config named
    (``expert_iteration.start_policy``), the sha256 of the weights of the run's own copy
    of it and that copy's training record and provenance, so the lineage survives the
    name (``champion`` names the new policy once it ships). None for a run from scratch.
    """
    config_path = run / "config.yaml"
    config = yaml.safe_load(config_path.read_text()) if config_path.is_file() else {}
    named = ((config or {}).get("expert_iteration") or {}).get("start_policy")
    if not named:
        return None
    copy = run / START_POLICY
    if not (copy / METADATA_FILE).is_file():
        raise SystemExit(
            f"error: {run} started from {named!r} but holds no copy of it in {copy}/, so "
            "which policy that was cannot be told; put the policy it started from there"
        )
    metadata = read_policy(copy).metadata
    return {
        "named": named,
        "weights_sha256": weights_sha256(copy),
        "training": metadata.get("training"),
        "provenance": metadata.get("provenance"),
    }


def ship(run: pathlib.Path, generation: int | None, note: str | None = None) -> None:
    rows = _metrics(run)
    chosen = choose_generation(rows) if generation is None else generation
    by_generation = {int(row["generation"]): row for row in rows}
    if chosen not in by_generation:
        raise SystemExit(
            f"error: generation {chosen} is not finished in {run}; "
            f"finished: {sorted(by_generation)}"
        )
    source = run / f"generation_{chosen:02d}" / "policy"
    saved = read_policy(source)  # refuses a corrupt or foreign file before anything is copied
    if not saved.metadata.get("value_head"):
        raise SystemExit(f"error: {source} has no value head; the champion needs one for az")
    if (source / WEIGHTS_FILE).stat().st_size > MAX_BYTES:
        raise SystemExit(f"error: {source / WEIGHTS_FILE} is larger than 8 MB")
    row = by_generation[chosen]
    metadata = dict(saved.metadata)
    provenance = dict(metadata.get("provenance", {}))
    provenance.update(
        run=run.name,
        generation=chosen,
        selected_by=(
            f"the highest {SELECTION_KEY} among the run's generations "
            "(the run's evaluation deals, not the arena table's)"
            if generation is None
            else "named by hand"
        ),
        data={
            "games": int(row["train_games"]),
            "decisions": int(row["train_decisions"]),
            "teacher": row["teacher"],
        },
        held_out={
            key: float(row[key])
            for key in ("validation_loss", "validation_value_loss", "validation_agreement")
        },
        generations=[{key: value for key, value in r.items() if key != "teacher"} for r in rows],
    )
    provenance.pop("arena", None)
    provenance.pop("note", None)
    provenance.pop("start_policy", None)
    started = start_policy(run)
    if started is not None:
        provenance["start_policy"] = started
    if note:
        provenance["note"] = note
    metadata["provenance"] = provenance
    CHAMPION_DIR.mkdir(exist_ok=True)
    temporary = CHAMPION_DIR / f".{WEIGHTS_FILE}.tmp"
    shutil.copyfile(source / WEIGHTS_FILE, temporary)
    temporary.replace(CHAMPION_DIR / WEIGHTS_FILE)
    atomic_write_text(CHAMPION_DIR / METADATA_FILE, json.dumps(metadata, indent=2) + "\n")
    read_policy(CHAMPION_DIR)
    print(f"shipped generation {chosen} of {run} to {CHAMPION_DIR}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=pathlib.Path, help="an expert-iteration run folder")
    parser.add_argument("--generation", type=int, help="default: best vs ismcts:1000")
    parser.add_argument("--note", help="recorded in the provenance: how the run went")
    args = parser.parse_args()
    ship(args.run, args.generation, args.note)


if __name__ == "__main__":
    main()
