"""`dmlsched.simulate`: the simulator under built-in and Python policies,
with the command line's tables as pandas DataFrames."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native
from ._native import Certificate, Instance

InstanceLike = Union[Instance, Mapping[str, Any], str, "os.PathLike[str]"]
PolicyLike = Union[str, Any]


def _pandas_version() -> Tuple[int, int]:
    parts = pd.__version__.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


# pandas 3.1 reads every float with its round-trip converter and deprecates
# the argument that chose it; before, `round_trip` must be asked for.
_READ_OPTIONS: Dict[str, Any] = (
    {} if _pandas_version() >= (3, 1) else {"float_precision": "round_trip"}
)


def _frame(text: str, dtype: Optional[Dict[str, Any]] = None) -> pd.DataFrame:
    """A CSV table written by the library, read back bit for bit: floats
    with the round-trip converter, only empty cells as missing values;
    `dtype` fixes some columns' types."""
    return pd.read_csv(
        io.StringIO(text),
        keep_default_na=False,
        na_values=[""],
        dtype=dtype,
        **_READ_OPTIONS,
    )


@dataclass
class Simulation:
    """The runs of `simulate`: one per (seed, policy), in that order.

    Attributes:
        summary: one row per run, the columns of `dmlsched simulate --out`'s
            summary.csv (policy, seed, workload, cluster, load_scale, jobs,
            completed, rejected, JCT statistics, utilization, utility,
            preemptions, decision_time_s, ..., the binding resource and the
            fairness metrics).
        jobs: one row per job and run, the columns of jobs.csv (policy,
            seed, job, arrival_s, start_s, finish_s, jct_s, ...).
        utilization: GPU use over time per run, the columns of
            utilization.csv.
        certificates: per run (aligned with `summary`'s rows), the policy's
            certificate (`Policy::finish`: an algorithm policy's objective,
            bound and guarantees over its own plans), or None for a
            baseline or a Python policy.
        notes: lines the policies and the run have to say (a round-based
            policy's realised fractions, a certificate that could not be
            made, fairness metrics skipped for size).
        runs: (policy, seed) per run, aligned with `summary`'s rows.
        summary_csv, jobs_csv, utilization_csv: the tables' CSV text, as
            the command line writes the files.
    """

    summary: pd.DataFrame
    jobs: pd.DataFrame
    utilization: pd.DataFrame
    certificates: List[Optional[Certificate]]
    notes: List[str]
    runs: List[Tuple[str, int]]
    summary_csv: str = field(repr=False)
    jobs_csv: str = field(repr=False)
    utilization_csv: str = field(repr=False)


def simulate(
    instance: InstanceLike,
    policies: Union[str, Sequence[PolicyLike]],
    seeds: Union[int, Iterable[int]] = (0,),
    params: Optional[Mapping[str, Any]] = None,
    *,
    stop: str = "all-done",
    stop_at_convergence: bool = False,
    placement: str = "best-fit",
    tiresias_thresholds: Optional[Sequence[float]] = None,
    tiresias_starve_factor: Optional[float] = None,
    round_s: float = 360.0,
    gpu_prices: Optional[Union[Mapping[str, float], str]] = None,
    workload: Optional[str] = None,
) -> Simulation:
    """Runs the simulator on `instance` under every policy, once per seed,
    as `dmlsched simulate` does.

    Args:
        instance: an `Instance`, a dict in the instance format, JSON text or
            a path; its jobs arrive as given.
        policies: policy names (any baseline, the algorithm policies oasis,
            locality, gadget and smd, the round-based `gavel-...` policies:
            `BASELINES`, `RING_BASELINES`, `ALGORITHM_POLICIES`,
            `ROUND_POLICIES`), or a comma-separated string of them, mixed
            freely with policy objects written in Python: any object with
            `on_event(view, event) -> list of actions` (see `View` and
            `Action`), optionally `name` (a str attribute or a method),
            `reset()` (called before each of its runs: one object serves
            every seed), `next_wakeup(view) -> float | None` and
            `notes() -> list[str]`.
        seeds: the seeds of the runs (of the randomised policies: locality,
            rar-online-random); one run per seed and policy.
        params: parameters of the algorithm policies, `{name: params}`, each
            a dict, JSON text or a path (the JSON of `dmlsched solve
            --params`, over the policy's practical defaults).
        stop: "all-done" (run until every job completed or was rejected) or
            "horizon" (stop at the instance's horizon).
        stop_at_convergence: ring-all-reduce jobs stop at their convergence
            iterations, when they have one.
        placement: how the baselines spread a job over machines: "best-fit",
            "first-fit", "consolidate" or "round-robin".
        tiresias_thresholds: Tiresias's queue thresholds, GPU-seconds,
            increasing (default: the Tiresias simulator's, 3250 and 7200).
        tiresias_starve_factor: Tiresias's starvation guard (off unless
            given).
        round_s: the round length, seconds, of the `gavel-...` policies.
        gpu_prices: price of one GPU of each type per hour, for
            gavel-max-throughput-per-cost: `{type: price}` or
            "TYPE:PRICE,...".
        workload: the workload label of the tables (default: the instance
            file's name, or "instance").

    Returns:
        A `Simulation`: `summary`, `jobs` and `utilization` DataFrames (the
        command line's summary.csv, jobs.csv and utilization.csv, values
        bit for bit), the certificates, notes and runs.

    Raises:
        InputError: a bad instance, name, parameter or option, or a
            Python policy's answer that is not a list of actions (the
            message names the event).
        RunError: a run that failed (an allocation the simulator refused,
            a solver failure).
        Exception: whatever a Python policy raised, as it raised it (with
            its traceback).

    The simulation runs without the GIL; a Python policy takes it at each
    event, and its view is a copy made at each event: O(machines + active
    jobs) per event, besides the policy's own work.
    """
    if isinstance(seeds, int):
        seeds = [seeds]
    if isinstance(instance, os.PathLike):
        instance = os.fspath(instance)
    out: Dict[str, Any] = _native._simulate(
        instance,
        policies,
        [int(s) for s in seeds],
        params,
        stop,
        bool(stop_at_convergence),
        placement,
        None if tiresias_thresholds is None else [float(x) for x in tiresias_thresholds],
        tiresias_starve_factor,
        float(round_s),
        gpu_prices,
        workload,
    )
    return Simulation(
        summary=_frame(out["summary_csv"]),
        jobs=_frame(out["jobs_csv"]),
        utilization=_frame(out["utilization_csv"]),
        certificates=list(out["certificates"]),
        notes=list(out["notes"]),
        runs=[(str(p), int(s)) for p, s in out["runs"]],
        summary_csv=out["summary_csv"],
        jobs_csv=out["jobs_csv"],
        utilization_csv=out["utilization_csv"],
    )
