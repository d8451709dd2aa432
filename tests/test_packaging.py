"""Packaging: configs by name or path, and the wheel working outside the repository.

The slow test builds the sdist and the wheel (C extensions compiled) from a copy of
the working tree, installs the wheel into a fresh virtual environment in a
temporary folder and runs the command line there, in another temporary folder:
train the smoke config found by name, evaluate the run and the shipped champion,
print the rules, replay a saved game and answer ``play``'s prompt from a pipe.
The heavy third-party packages (torch, ...) are not installed again: the new
environment sees this one's site-packages through a folder of links that leaves
out this project's own installation (its editable finder and metadata), so the
project itself can only come from the wheel.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import (
    ALGORITHM_NAMES,
    ConfigError,
    load_config,
    read_algorithm,
    resolve_config,
    shipped_config_names,
    shipped_configs_dir,
)
from jekyll_hyde_train.expert_iteration.config import EITrainConfig
from tests.test_typed_install import check_a_users_script

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Each top-level folder of the package and the import name it installs as.
PACKAGES = {
    "jekyll_hyde_env": "jekyll_hyde_env",
    "agents": "jekyll_hyde_agents",
    "arena": "jekyll_hyde_arena",
    "train": "jekyll_hyde_train",
    "app": "jekyll_hyde_app",
}
# What a copy of the working tree leaves out: local state, builds and caches.
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "runs",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.so",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
)


# Run in the new environment: where the project's modules, C extensions and data come
# from (each must be inside its site-packages), then sys.path (nothing of the repository),
# after checking that no editable-install finder of the repository is active.
PROBE = """
import sys
import jekyll_hyde_agents, jekyll_hyde_agents._rollout, jekyll_hyde_agents.champion
import jekyll_hyde_env, jekyll_hyde_env.core._core
import jekyll_hyde_train, jekyll_hyde_train.common.config
assert not [f for f in sys.meta_path if "editable" in repr(f).lower()], sys.meta_path
agents, train = jekyll_hyde_agents, jekyll_hyde_train
for module in (agents, agents._rollout, jekyll_hyde_env, jekyll_hyde_env.core._core, train):
    print(module.__file__)
print(jekyll_hyde_train.common.config.shipped_configs_dir())
print(jekyll_hyde_agents.champion.champion_path())
print(*sys.path)
"""


# --- configs by name or path (quick) ---------------------------------------------------


def test_the_shipped_configs_are_the_repository_configs_in_a_folder_per_algorithm():
    assert shipped_configs_dir() == ROOT / "configs"
    names = shipped_config_names()
    assert {"expert_iteration/default", "expert_iteration/smoke", "ppo/default",
            "rllib/default", "exploit/default"} <= set(names)  # fmt: skip
    assert names == sorted(
        p.relative_to(ROOT / "configs").with_suffix("").as_posix()
        for p in (ROOT / "configs").glob("*/*.yaml")
    )
    assert not list((ROOT / "configs").glob("*.yaml"))  # every config in its folder
    for name in names:
        folder = name.split("/")[0]
        if folder in ALGORITHM_NAMES:  # a training config sits in its algorithm's folder
            assert read_algorithm(name) == folder


@pytest.mark.parametrize(
    ("spec", "file"),
    [
        ("smoke", "expert_iteration/smoke"),
        ("smoke.yaml", "expert_iteration/smoke"),
        ("configs/smoke.yaml", "expert_iteration/smoke"),
        ("configs/expert_iteration/smoke.yaml", "expert_iteration/smoke"),
        ("expert_iteration", "expert_iteration/default"),
        ("default", "expert_iteration/default"),
        ("ppo", "ppo/default"),
        ("ppo/smoke", "ppo/smoke"),
        ("ppo_smoke", "ppo/smoke"),
        ("configs/ppo_long.yaml", "ppo/long"),
        ("rllib_smoke", "rllib/smoke"),
        ("exploit", "exploit/default"),
    ],
)
def test_a_config_is_found_by_name_from_any_folder(spec, file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ here
    assert resolve_config(spec) == ROOT / "configs" / f"{file}.yaml"


def test_a_config_named_from_another_folder_loads_with_overrides(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert read_algorithm("smoke") == "expert_iteration"
    assert load_config("smoke", ["run.seed=5"], schema=EITrainConfig).run.seed == 5


def test_a_path_that_exists_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke").write_text("algorithm: ppo\nrun: {name: mine}\n")
    assert resolve_config("smoke") == pathlib.Path("smoke")
    assert read_algorithm("smoke") == "ppo"
    (tmp_path / "configs" / "expert_iteration").mkdir(parents=True)
    (tmp_path / "configs" / "expert_iteration" / "default.yaml").write_text("algorithm: ppo\n")
    # the local file, not the shipped one
    assert read_algorithm("configs/expert_iteration/default.yaml") == "ppo"


@pytest.mark.parametrize("spec", ["smok", "configs/smok.yaml"])
def test_an_unknown_config_name_lists_the_shipped_names(spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        ConfigError, match=r"smok.*no such file.*shipped configs: .*expert_iteration/default.*smoke"
    ):
        resolve_config(spec)


def test_a_missing_path_is_not_taken_for_a_name(tmp_path):
    # other/smoke.yaml names a file in other/, not the shipped smoke config
    with pytest.raises(ConfigError, match=r"cannot read config .*other/smoke.yaml.*no such file"):
        resolve_config(tmp_path / "other" / "smoke.yaml")


def test_train_and_exploit_take_config_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["train", "--config", "nosuch", "--run-dir", str(tmp_path / "r")]) == 2
    error = capsys.readouterr().err
    assert "cannot read config 'nosuch'" in error and "smoke" in error
    assert not (tmp_path / "r").exists()
    assert cli.main(["exploit", "random", "--config", "nosuch"]) == 2
    assert "shipped configs:" in capsys.readouterr().err
    from jekyll_hyde_train.exploit.config import load_exploit_config

    assert load_exploit_config("exploit", []) == load_exploit_config(
        str(ROOT / "configs" / "exploit" / "default.yaml"), []
    )
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    # the training configs only: no exploit or benchmark settings among them
    assert "shipped config's name (expert_iteration/default, expert_iteration/long, " in shown
    assert "benchmarks/eval" not in shown and "exploit/default" not in shown


# --- the wheel outside the repository (slow) -------------------------------------------


def _run(args, cwd, env=None, input=None, timeout=600) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return result


def _ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _third_party_only(site_packages: pathlib.Path, links: pathlib.Path) -> None:
    """Links to everything in ``site_packages`` but this project's own installation."""
    links.mkdir()
    for entry in site_packages.iterdir():
        name = entry.name.lower()
        if name.startswith(("__editable__", "jekyll_hyde_env", "jekyll-hyde-env")):
            continue
        if entry.name in PACKAGES.values():
            continue
        (links / entry.name).symlink_to(entry)


@pytest.mark.slow
def test_the_wheel_installs_and_runs_outside_the_repository(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    dist = tmp_path / "dist"
    # Without isolation: the build backend (setuptools, wheel) comes from this environment
    # rather than the network; `python -m build` alone does the same in a fresh one.
    built = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, source], ROOT)
    _ok(built)
    said = (built.stdout + built.stderr).splitlines()
    warnings = [line for line in said if "WARNING" in line or "Warning" in line]
    assert not warnings, "the build warns:\n" + "\n".join(warnings)
    (sdist,) = dist.glob("jekyll_hyde_env-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.partition("/")[2] for name in archive.getnames()}
    shipped = {"configs/expert_iteration/smoke.yaml", "configs/ppo/smoke.yaml"}
    assert shipped | {"agents/_rollout.c", "jekyll_hyde_env/core/_core.c"} <= names
    (wheel,) = dist.glob("jekyll_hyde_env-*.whl")
    assert "-cp3" in wheel.name  # a platform wheel: the C extensions are in it
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
    top_level = {name.split("/")[0] for name in files} - {
        name.split("/")[0] for name in files if name.split("/")[0].endswith(".dist-info")
    }
    assert top_level == set(PACKAGES.values()), top_level  # no generic name such as agents
    configs = {
        f"jekyll_hyde_train/configs/{p.relative_to(ROOT / 'configs').as_posix()}"
        for p in (ROOT / "configs").glob("*/*.yaml")
    }
    assert configs and configs <= files
    for data in (
        "jekyll_hyde_env/rules.md",
        "jekyll_hyde_agents/champion_policy/policy.npz",
        "jekyll_hyde_app/web/static/index.html",
        *(f"{name}/py.typed" for name in PACKAGES.values()),  # typed packages (PEP 561)
    ):
        assert data in files
    for extension in ("jekyll_hyde_env/core/_core.", "jekyll_hyde_agents/_rollout."):
        assert any(f.startswith(extension) and f.endswith(".so") for f in files), extension
    modules = {
        str(pathlib.PurePosixPath(name, p.relative_to(ROOT / folder)))
        for folder, name in PACKAGES.items()
        for p in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert modules <= files, f"modules left out of the wheel: {sorted(modules - files)}"

    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path))
    python = venv / "bin" / "python"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")
    }
    env["PYTHONNOUSERSITE"] = "1"
    new_site = pathlib.Path(
        _ok(
            _run(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                tmp_path,
                env,
            )
        ).strip()
    )
    links = tmp_path / "third_party"
    _third_party_only(pathlib.Path(sysconfig.get_paths()["purelib"]), links)
    (new_site / "third_party.pth").write_text(f"import site; site.addsitedir({str(links)!r})\n")
    # --no-index: every requirement of the package and its train extra must already be met
    # by the third-party packages, or the install fails (nothing is downloaded).
    _ok(
        _run(
            [
                python,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-index",
                "--disable-pip-version-check",
                f"{wheel}[train]",
            ],
            tmp_path,
            env,
        )
    )
    check = _run([python, "-m", "pip", "check", "--disable-pip-version-check"], tmp_path, env)
    assert "jekyll-hyde-env" not in check.stdout.lower(), check.stdout

    work = tmp_path / "work"  # outside the repository, with no configs/ folder
    work.mkdir()
    where = _ok(_run([python, "-c", PROBE], work, env)).splitlines()
    for file in where[:-1]:
        assert pathlib.Path(file).is_relative_to(new_site), file
    assert not any(
        entry and pathlib.Path(entry).resolve().is_relative_to(ROOT) for entry in where[-1].split()
    ), where[-1]

    jh = venv / "bin" / "jekyll-hyde"
    assert _ok(_run([jh, "--version"], work, env)).startswith("jekyll-hyde ")
    run = work / "run"
    trained = _run([jh, "train", "--config", "smoke", "--run-dir", run], work, env)
    _ok(trained)
    assert "name: smoke" in trained.stdout
    assert (run / "policy" / "policy.json").is_file() and (run / "report.md").is_file()
    refused = _run([jh, "train", "--config", "smok"], work, env)
    assert refused.returncode == 2 and "shipped configs: " in refused.stderr
    assert "smoke" in refused.stderr and "Traceback" not in refused.stderr

    games = work / "games"
    games.mkdir()
    report = _ok(
        _run(
            [
                jh,
                "eval",
                run,
                "heuristic",
                "--pairs",
                "2",
                "--workers",
                "1",
                "--no-progress",
                "--save-games",
                games,
            ],
            work,
            env,
        )
    )
    assert "2 duplicate pairs" in report
    champion = _ok(
        _run(
            [jh, "eval", "champion", "random", "--pairs", "2", "--workers", "1", "--no-progress"],
            work,
            env,
        )
    )
    assert champion.startswith("champion (A) against random (B)")
    assert "Jekyll" in _ok(_run([jh, "rules"], work, env))

    record = sorted(games.glob("*.json"))[0]
    replayed = _ok(_run([jh, "replay", record, "--no-wait"], work, env))
    assert "Round 1 begins" in replayed
    played = _run(
        [jh, "play", "--as", "hyde", "--opponent", "heuristic", "--seed", "3"],
        work,
        env,
        input="?\nq\n",
    )
    assert _ok(played).startswith("Opponent: heuristic. Deals from seed 3")
    assert "Type a card" in played.stdout and "Game abandoned." in played.stdout

    # A user's type checker resolves the installed wheel's packages and reads their types.
    check_a_users_script(python, work)
