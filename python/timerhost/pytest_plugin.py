"""The timerhost pytest plugin (registered through the ``pytest11`` entry point).

Fixtures:

- ``chain`` — a :class:`timerhost.Chain`, isolated per test: one in-memory
  chain per session, snapshotted before each test and reverted after it, so
  every test starts from the same state root without paying for a new
  chain (or a new interpreter).
- ``accounts`` — ``chain.accounts``: the ten funded dev accounts.
- ``deploy`` — ``deploy(source_or_path, *args, sender=None, value=0, **opts)``
  deploys an actor from source text or a ``.py`` path (relative paths are
  looked up from the current directory, the rootdir, then ``<rootdir>/actors``).

Options:

- ``--timerhost-gas`` prints a table of cycles and cells per actor handler
  (calls, deployments and timer fires) at the end of the run.

Failures from the chain (:class:`timerhost.Reverted`, :class:`timerhost.DeployError`)
are reported with the actor's Python traceback and the resources used; the
package's own frames are hidden from pytest's traceback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import pytest

import timerhost
from timerhost import chain as chain_module


@dataclass
class _GasStats:
    count: int = 0
    cycles_min: int = 0
    cycles_max: int = 0
    cycles_total: int = 0
    cells_min: int = 0
    cells_max: int = 0
    cells_total: int = 0
    failed: int = 0

    def add(self, cycles: int, cells: int, ok: bool) -> None:
        if self.count == 0:
            self.cycles_min = self.cycles_max = cycles
            self.cells_min = self.cells_max = cells
        self.count += 1
        self.cycles_min = min(self.cycles_min, cycles)
        self.cycles_max = max(self.cycles_max, cycles)
        self.cycles_total += cycles
        self.cells_min = min(self.cells_min, cells)
        self.cells_max = max(self.cells_max, cells)
        self.cells_total += cells
        if not ok:
            self.failed += 1


class GasReport:
    """Cycles and cells per ``(actor, handler)``, filled by an observer of every mined receipt."""

    def __init__(self) -> None:
        self.rows: Dict[Tuple[str, str], _GasStats] = {}

    def observe(self, _chain: Any, receipt: "timerhost.Receipt", actor: str, handler: str) -> None:
        self.rows.setdefault((actor, handler), _GasStats()).add(
            receipt.cycles_used, receipt.cells_used, receipt.ok
        )

    def lines(self) -> List[str]:
        header = ("actor", "handler", "calls", "failed", "cycles min", "cycles avg", "cycles max", "cells min", "cells avg", "cells max")
        body = []
        for (actor, handler), s in sorted(self.rows.items()):
            body.append(
                (
                    actor,
                    handler,
                    str(s.count),
                    str(s.failed),
                    str(s.cycles_min),
                    str(s.cycles_total // s.count),
                    str(s.cycles_max),
                    str(s.cells_min),
                    str(s.cells_total // s.count),
                    str(s.cells_max),
                )
            )
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

        def fmt(row: Tuple[str, ...]) -> str:
            left = [row[i].ljust(widths[i]) for i in range(2)]
            right = [row[i].rjust(widths[i]) for i in range(2, len(row))]
            return "  ".join(left + right)

        return [fmt(header), "  ".join("-" * w for w in widths)] + [fmt(r) for r in body]


_GAS_KEY = pytest.StashKey[GasReport]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("timerhost")
    group.addoption(
        "--timerhost-gas",
        action="store_true",
        default=False,
        help="print cycles and cells used per actor handler at the end of the run",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--timerhost-gas", default=False):
        report = GasReport()
        config.stash[_GAS_KEY] = report
        chain_module._observers.append(report.observe)


def pytest_unconfigure(config: pytest.Config) -> None:
    report = config.stash.get(_GAS_KEY, None)
    if report is not None and report.observe in chain_module._observers:
        chain_module._observers.remove(report.observe)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    report = config.stash.get(_GAS_KEY, None)
    if report is None:
        return
    terminalreporter.section("timerhost gas (cycles / cells per handler)")
    if not report.rows:
        terminalreporter.write_line("no actor executions were mined")
        return
    for line in report.lines():
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def _timerhost_session_chain() -> timerhost.Chain:
    return timerhost.Chain()


@pytest.fixture
def chain(_timerhost_session_chain: timerhost.Chain) -> Iterator[timerhost.Chain]:
    """A fresh-looking dev chain for each test (snapshot before, revert after)."""
    c = _timerhost_session_chain
    saved = (dict(c._keys), dict(c._names), c.interval_ms, c.cycles_limit, c.cells_limit)
    snap = c.snapshot()
    try:
        yield c
    finally:
        c.revert(snap)
        c._keys, c._names, c.interval_ms, c.cycles_limit, c.cells_limit = saved


@pytest.fixture
def accounts(chain: timerhost.Chain) -> List[timerhost.Account]:
    """The ten funded dev accounts of ``chain``."""
    return chain.accounts


def _resolve(source: Union[str, "os.PathLike[str]"], rootdir: Path) -> Union[str, Path]:
    if isinstance(source, str) and ("\n" in source or not source.endswith(".py")):
        return source  # source text
    path = Path(source)
    if path.is_absolute():
        return path
    for base in (Path.cwd(), rootdir, rootdir / "actors"):
        if (base / path).is_file():
            return base / path
    raise FileNotFoundError(
        f"actor source {str(source)!r} not found in {Path.cwd()}, {rootdir} or {rootdir / 'actors'}"
    )


@pytest.fixture
def deploy(chain: timerhost.Chain, request: pytest.FixtureRequest) -> Callable[..., timerhost.Actor]:
    """``deploy(source_or_path, *args, sender=None, value=0, **opts) -> Actor``."""
    rootdir = Path(str(request.config.rootpath))

    def _deploy(
        source: Union[str, "os.PathLike[str]"],
        *args: Any,
        sender: Optional[Any] = None,
        value: int = 0,
        **opts: Any,
    ) -> timerhost.Actor:
        __tracebackhide__ = True
        return chain.deploy(_resolve(source, rootdir), sender=sender, args=args, value=value, **opts)

    return _deploy
