"""The C extensions; everything else about the package is in pyproject.toml.

The C rules core (jekyll_hyde_env/core/jh_rules.h) serves two extensions: the
batched games of jekyll_hyde_env.vector, and search (agents/rollout.py falls
back to the Python engine when it is missing). tests/test_rollout_core.py and
tests/test_batched.py hold the core to the Python engine.
"""

from setuptools import Extension, setup

CORE_HEADERS = [
    "jekyll_hyde_env/core/jh_rules.h",
    "jekyll_hyde_env/core/jh_observe.h",
    "jekyll_hyde_env/core/jh_pystate.h",
    "jekyll_hyde_env/core/jh_information.h",
]

# The searches of agents/_rollout.c, a header each.
SEARCH_HEADERS = ["search", "ismcts", "az", "pimc", "label", "net", "heuristic"]

setup(
    ext_modules=[
        Extension(
            "jekyll_hyde_env.core._core",
            sources=["jekyll_hyde_env/core/_core.c"],
            include_dirs=["jekyll_hyde_env/core"],
            depends=CORE_HEADERS,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "jekyll_hyde_agents._rollout",
            sources=["agents/_rollout.c"],
            include_dirs=["jekyll_hyde_env/core"],
            depends=[*CORE_HEADERS, *(f"agents/_{name}.h" for name in SEARCH_HEADERS)],
            # -O3 lets gcc vectorise the network's row additions (agents/_net.h); with
            # -ffp-contract=off no multiply-add is fused, so every CPU gets the same bits.
            extra_compile_args=["-O3", "-ffp-contract=off"],
        ),
    ]
)
