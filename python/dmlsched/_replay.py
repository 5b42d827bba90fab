"""``dmlsched.replay``: a window of a real cluster trace under policies, as
``dmlsched replay`` runs it, with its tables as pandas DataFrames."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _native
from ._native import InputError, RunError
from ._simulation import _frame

__all__ = ["replay", "ReplayResult"]


@dataclass
class ReplayResult:
    """What :func:`replay` returns.

    Attributes:
        summary: ``summary.csv`` of ``dmlsched replay``: one row per run, the
            same columns, rows and values (``solver_time_s`` is wall-clock
            time, so it differs from one run to the next).
        jobs: every run's per-job table (``jobs-<policy>-x<scale>-seed<seed>.csv``)
            one after the other, with a ``load_scale`` column after ``seed``.
        certificates: one dict per algorithm run, as in ``certificates.json``
            (``policy``, ``load_scale``, ``seed``, ``workload``, ``cluster``),
            with ``certificate`` a :class:`Certificate`.
        certificates_json: ``certificates.json``'s content, or ``None``.
        failures: the runs that failed (``failures.csv``'s columns); empty
            when none did.
        messages: the set-up's description and the notes, as the command
            prints them before its table.
        notes: the policies' own notes: (policy, load_scale, seed, note).
    """

    summary: pd.DataFrame
    jobs: pd.DataFrame
    certificates: List[Dict[str, Any]]
    certificates_json: Optional[str]
    failures: pd.DataFrame
    messages: List[str]
    notes: List[tuple] = field(default_factory=list)


def _gpus_text(gpus: Union[int, str, Mapping[str, int]]) -> str:
    if isinstance(gpus, bool):
        raise InputError(f"--gpus {gpus!r}: expected a number of GPUs, 'TYPE:N,...' or a dict")
    if isinstance(gpus, int):
        return str(gpus)
    if isinstance(gpus, str):
        return gpus
    if isinstance(gpus, Mapping):
        return ",".join(f"{k}:{v}" for k, v in gpus.items())
    raise InputError(f"--gpus {gpus!r}: expected a number of GPUs, 'TYPE:N,...' or a dict")


def _prices_text(prices: Union[None, str, Mapping[str, float]]) -> Optional[str]:
    if prices is None or isinstance(prices, str):
        return prices
    if isinstance(prices, Mapping):
        return ",".join(f"{k}:{v!r}" for k, v in prices.items())
    raise InputError(f"--gpu-prices {prices!r}: expected 'TYPE:PRICE,...' or a dict")


def _names(value: Union[None, str, Sequence[str]], flag: str) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.split(",")]
    return [str(v) for v in value]


def _count(value: Any, flag: str, bits: int = 64) -> int:
    """A whole number for a flag that takes one: a Python int (not a bool),
    0 to 2^bits - 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{flag}: expected an int, got {value!r}")
    if not 0 <= value < 2**bits:
        raise InputError(f"{flag} {value}: expected a whole number from 0 to 2^{bits} - 1")
    return value


def _list(value: Any, kind: type, flag: str) -> list:
    if isinstance(value, (str, bytes)):
        value = [v for v in str(value).split(",")]
    elif not isinstance(value, (list, tuple)):
        value = [value]
    try:
        return [kind(v) for v in value]
    except (TypeError, ValueError) as e:
        raise InputError(f"{flag} {value!r}: {e}") from None


def replay(
    trace: Union[str, os.PathLike],
    *,
    format: Optional[str] = None,
    arch: Optional[str] = None,
    start: Union[None, str, float] = None,
    jobs: int = 500,
    gpus: Union[int, str, Mapping[str, int]] = 64,
    gpus_per_machine: int = 8,
    ps_servers: Optional[int] = None,
    horizon: Union[None, str, int] = None,
    slot_length: Optional[float] = None,
    utility: Optional[str] = None,
    policies: Union[None, str, Sequence[str]] = None,
    params: Optional[Mapping[str, Any]] = None,
    load_scales: Union[float, Sequence[float]] = (1.0,),
    seeds: Union[int, Sequence[int]] = (0,),
    placement: str = "best-fit",
    tiresias_thresholds: Optional[Sequence[float]] = None,
    tiresias_starve_factor: Optional[float] = None,
    round_s: float = 360.0,
    gpu_prices: Union[None, str, Mapping[str, float]] = None,
    gavel_throughputs: Union[None, str, os.PathLike] = None,
    gavel_gpu: str = "v100",
    out: Union[None, str, os.PathLike] = None,
) -> ReplayResult:
    """Replays a window of a real cluster trace under baselines and
    algorithm policies, as ``dmlsched replay`` does.

    Every keyword is the command's flag of the same name (``gpus_per_machine``
    is ``--gpus-per-machine``), with the same defaults and meaning; lists may
    be given as Python lists or as the flag's comma-separated text. ``gpus``
    is a number, ``"v100:36,p100:36"`` or ``{"v100": 36, "p100": 36}``;
    ``params`` maps an algorithm policy to its parameters (a dict, JSON text
    or a file path); ``gpu_prices`` is ``"TYPE:PRICE,..."`` or a dict. With
    ``out``, the command's files are written to that folder too.

    The run releases the GIL: other Python threads go on meanwhile. Ctrl-C
    (any signal handler that raises) stops the replay before its next run
    and raises; a run under way finishes first.

    Raises:
        InputError: bad options, an unreadable or malformed trace or
            parameters (the command's exit code 2), with its message.
        RunError: when a run failed on valid input (exit code 1). When only
            some runs failed, the error (InputError or RunError, as the
            command's exit code) carries the other runs' results as its
            ``result`` attribute (a :class:`ReplayResult`).
    """
    named = _names(policies, "--policies")
    param_items = []
    for name, value in (params or {}).items():
        param_items.append((str(name), value))
    raw = _native._replay(
        os.fspath(trace),
        format=format,
        arch=arch,
        start=None if start is None else str(start),
        jobs=_count(jobs, "--jobs"),
        gpus=_gpus_text(gpus),
        gpus_per_machine=_count(gpus_per_machine, "--gpus-per-machine", 32),
        ps_servers=None if ps_servers is None else _count(ps_servers, "--ps-servers", 32),
        horizon=None if horizon is None else str(horizon),
        slot_length=slot_length,
        utility=utility,
        policies=named,
        params=param_items,
        load_scales=_list(load_scales, float, "--load-scales"),
        seeds=[_count(x, "--seeds") for x in _list(seeds, int, "--seeds")],
        placement=placement,
        tiresias_thresholds=None if tiresias_thresholds is None
        else _list(tiresias_thresholds, float, "--tiresias-thresholds"),
        tiresias_starve_factor=tiresias_starve_factor,
        round_s=float(round_s),
        gpu_prices=_prices_text(gpu_prices),
        gavel_throughputs=None if gavel_throughputs is None else os.fspath(gavel_throughputs),
        gavel_gpu=gavel_gpu,
        out=None if out is None else os.fspath(out),
    )
    result = _result(raw)
    if raw["error"] is not None:
        kind, message = raw["error"]
        error = (InputError if kind == "input" else RunError)(message)
        error.result = result
        raise error
    return result


def _result(raw: Dict[str, Any]) -> ReplayResult:
    summary = _frame(raw["summary_csv"])
    frames = []
    notes = []
    for run in raw["runs"]:
        frame = _frame(run["jobs_csv"])
        frame.insert(frame.columns.get_loc("seed") + 1, "load_scale", run["load_scale"])
        frames.append(frame)
        for note in run["notes"]:
            notes.append((run["policy"], run["load_scale"], run["seed"], note))
    jobs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    failures = pd.DataFrame(
        raw["failures"],
        columns=["policy", "load_scale", "seed", "workload", "cluster", "exit", "error"],
    )
    return ReplayResult(
        summary=summary,
        jobs=jobs,
        certificates=list(raw["certificates"]),
        certificates_json=raw["certificates_json"],
        failures=failures,
        messages=list(raw["messages"]),
        notes=notes,
    )
