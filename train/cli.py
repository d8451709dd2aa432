"""The ``jekyll-hyde`` command: thin dispatch to the training and evaluation code."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jekyll-hyde", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train Jekyll and Hyde policies")
    train.add_argument("--config", default="configs/default.yaml")
    args = parser.parse_args(argv)
    if args.command == "train":
        print(
            "The environment is installed and tested; self-play training is not part "
            "of this version yet.",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
