"""The PEP 517 build backend of ``pip install ./python``: maturin's, with
``--ignore-rust-version``.

rustpython-vm 0.6.0 pins its ruff parser crates at ``=0.16.5``; they declare
``rust-version = 1.96`` but build and pass on this project's Rust 1.95
(docs/ARCHITECTURE.md, "Dependencies"). Cargo refuses such crates unless it
is given ``--ignore-rust-version``, which maturin's backend reads from
``MATURIN_PEP517_ARGS`` and which no ``[tool.maturin]`` key can set. So that
an actor author's first ``pip install`` just works, this module sets it
(unless the caller already set ``MATURIN_PEP517_ARGS``) and hands every PEP 517
hook to maturin unchanged.
"""

import os

os.environ.setdefault("MATURIN_PEP517_ARGS", "--ignore-rust-version")

from maturin import (  # noqa: E402  (the variable must be set first)
    build_editable,
    build_sdist,
    build_wheel,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_wheel",
]
