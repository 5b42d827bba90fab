"""Type stubs of `dmlsched._native`, the Rust extension of the `dmlsched`
package (import `dmlsched`, which re-exports every name here)."""

import os
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]
JsonLike = Union[Mapping[str, Any], Sequence[Any], str, "os.PathLike[str]"]
"""A dict (or list), JSON text (starting with `{` or `[`) or a file path."""
InstanceLike = Union["Instance", Mapping[str, Any], str, "os.PathLike[str]"]
"""An `Instance`, a dict in the instance format, JSON text or a file path."""
Placement = List[Tuple[int, int, int]]
"""Tasks per machine: `(machine id, workers, parameter servers)` tuples."""
PlacementLike = Union[
    Sequence[Tuple[int, int, int]],
    Sequence[Tuple[int, Tuple[int, int]]],
    Mapping[int, Tuple[int, int]],
]
"""A placement as `(machine, workers, ps)` tuples, `(machine, (workers,
ps))` pairs (or `(machine, {"workers": w, "ps": p})`), or a dict
`{machine: (workers, ps)}`."""

__version__: str
"""The package's version (the crate's)."""

ALGORITHMS: Tuple[str, ...]
"""The algorithms `solve` runs (`registry::ALGORITHMS`)."""
ALGORITHM_POLICIES: Tuple[str, ...]
"""The algorithms that are also simulator policies (and take `params` in
`simulate`)."""
SESSION_ALGORITHMS: Tuple[str, ...]
"""The algorithms a `Session` runs."""
BASELINES: Tuple[str, ...]
"""The baseline simulator policies for jobs of any kind."""
RING_BASELINES: Tuple[str, ...]
"""The baseline simulator policies for ring-all-reduce jobs only."""
ROUND_POLICIES: Tuple[str, ...]
"""The allocation policies run in round-based leases (`gavel-...`)."""
ALLOCATION_POLICIES: Tuple[str, ...]
"""The policies `allocate` runs."""
PLACEMENT_RULES: Tuple[str, ...]
"""The placement rules of the baselines and of `Placer`."""

class DmlschedError(Exception):
    """The base of every error dmlsched raises."""

class InputError(DmlschedError):
    """Bad input: an invalid instance, parameter or option, a job or
    cluster outside an algorithm's model, an unreadable file or malformed
    JSON (the command line's exit code 2). The message is the library's
    (a file's path first, for an error about a file)."""

class RunError(DmlschedError):
    """A run that failed on valid input: a solver failure, a violated
    certificate, a refused allocation, a bug (the command line's exit
    code 1). The message is the library's."""

class Instance:
    """An instance: a cluster, jobs with their arrivals, a slot length and a
    horizon (docs/instance-format.md), validated once when read."""

    def __init__(self, source: InstanceLike) -> None:
        """An instance from a dict, JSON text or a file path.

        Raises:
            InputError: malformed JSON (naming the field's path) or an
                invalid instance.
        """
    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> "Instance":
        """An instance from a dict in the instance format. Floats JSON
        cannot hold (NaN, ±inf) are passed as "nan", "inf", "-inf"."""
    @staticmethod
    def from_json(text: str) -> "Instance":
        """An instance from JSON text in the instance format."""
    @staticmethod
    def from_file(path: PathLike) -> "Instance":
        """An instance from a JSON file in the instance format."""
    def to_dict(self) -> Dict[str, Any]:
        """The instance as a dict (the instance format, with
        `format_version`)."""
    def to_json(self) -> str:
        """The instance as pretty JSON text."""
    @property
    def n_jobs(self) -> int:
        """The number of jobs."""
    @property
    def n_machines(self) -> int:
        """The number of machines."""
    @property
    def job_ids(self) -> List[int]:
        """The jobs' ids, in the instance's order."""
    @property
    def machine_ids(self) -> List[int]:
        """The machines' ids, in the cluster's order (`View.free`'s)."""
    @property
    def horizon_slots(self) -> int:
        """The horizon, in slots."""
    @property
    def horizon_s(self) -> float:
        """The horizon, in seconds."""
    @property
    def slot_length_s(self) -> float:
        """The slot length, in seconds."""
    @property
    def gpu_types(self) -> List[str]:
        """The cluster's GPU types (empty when it does not model types)."""
    @property
    def total_gpus(self) -> float:
        """The cluster's GPUs, all machines together."""
    @property
    def label(self) -> str:
        """What reports call it: the file's name, or "instance"."""
    def job(self, id: int) -> Optional[Dict[str, Any]]:
        """The job with id `id` as a dict (the instance format), or None."""
    def cluster(self) -> Dict[str, Any]:
        """The cluster as a dict (the instance format's `cluster`)."""
    def __len__(self) -> int:
        """The number of jobs."""

class Bound:
    """A bound on the optimum (upper when maximising, lower when
    minimising)."""

    @property
    def value(self) -> float:
        """The bound's value (±inf: no information)."""
    @property
    def kind(self) -> str:
        """Where it comes from: "lp_dual_safe", "lp_primal", "mip_dual",
        "trivial" or "online_dual"."""
    @property
    def valid(self) -> bool:
        """False only for an online dual whose assumptions do not hold."""
    @property
    def usable(self) -> bool:
        """Whether it may be used as a bound: valid and not NaN."""

class Guarantee:
    """An a-priori statement of an algorithm, evaluated for this run."""

    @property
    def expression(self) -> str:
        """The statement, e.g. "OPT ≤ 2α·ALG"."""
    @property
    def source(self) -> str:
        """Where it is proven: a paper, or "crate"."""
    @property
    def value(self) -> Optional[float]:
        """Its right-hand side for this instance, if it has one."""
    @property
    def ratio(self) -> Optional[float]:
        """`value` over the relaxation bound, when meaningful."""
    @property
    def ratio_bound(self) -> Optional[float]:
        """A ratio statement's bound: max OPT ≤ ratio_bound·ALG, min
        ALG ≤ ratio_bound·OPT."""
    @property
    def kind(self) -> Literal["deterministic", "in_expectation", "with_probability"]:
        """How it holds."""
    @property
    def probability(self) -> Optional[float]:
        """The probability of a "with_probability" guarantee."""
    @property
    def scope(self) -> Literal["final_point", "rounded_before_repair"]:
        """Which point it is about."""
    @property
    def valid(self) -> bool:
        """False when the theorem's assumptions do not hold in this run."""
    @property
    def reasons(self) -> List[str]:
        """Why it is not valid (empty when valid)."""
    @property
    def checked(self) -> bool:
        """Whether `Certificate.check` verifies it (valid, deterministic,
        about the final point)."""

class Certificate:
    """What is proven about a returned point: its objective, a bound on the
    optimum, the a-priori guarantees and the achieved ratio."""

    @property
    def algorithm(self) -> str:
        """The algorithm that returned the point."""
    @property
    def sense(self) -> Literal["maximise", "minimise"]:
        """The direction of optimisation."""
    @property
    def maximise(self) -> bool:
        """Whether the objective is maximised."""
    @property
    def objective(self) -> float:
        """The returned point's objective."""
    @property
    def bound(self) -> Bound:
        """The relaxation's bound on the optimum."""
    @property
    def best_bound(self) -> float:
        """The tightest usable bound (relaxation and exact solve); ±inf
        when there is none."""
    @property
    def achieved_ratio(self) -> float:
        """The ratio against the best bound (≥ 1 when correct; inf without
        a bound; NaN where undefined)."""
    @property
    def optimum(self) -> Optional[float]:
        """The optimum, when an exact solve proved it."""
    @property
    def exact(self) -> Optional[Dict[str, Any]]:
        """The exact solve's result, if one was run."""
    @property
    def guarantees(self) -> List[Guarantee]:
        """The a-priori guarantees, evaluated for this run."""
    @property
    def feasibility(self) -> Dict[str, Any]:
        """The point's feasibility report."""
    @property
    def run(self) -> Dict[str, Any]:
        """How the run went (times, LP solves, ...)."""
    @property
    def scope(self) -> Optional[str]:
        """What the bound and guarantees cover, in words."""
    @property
    def valid(self) -> bool:
        """Whether the certificate passes its own check (at 1e-9) and, for
        a solve, the schedule passes the independent checker
        (`schedule::verify`)."""
    @property
    def problems(self) -> List[str]:
        """What `valid` found wrong (empty when valid)."""
    def check(self, tol: float = 1e-9) -> None:
        """Runs the checks at tolerance `tol`.

        Raises:
            RunError: the first problem found.
        """
    def to_dict(self) -> Dict[str, Any]:
        """The certificate's JSON as a dict (non-finite numbers as the
        strings "inf", "-inf", "nan")."""
    def to_json(self) -> str:
        """The certificate as pretty JSON text."""

class Solved:
    """An algorithm's run (`solve`)."""

    @property
    def algorithm(self) -> str:
        """The algorithm's name."""
    @property
    def seed(self) -> int:
        """The seed it ran with."""
    @property
    def schedule(self) -> Dict[str, Any]:
        """The schedule: `{"jobs": [{"job", "admitted", "segments"}, ...]}`,
        the JSON of `dmlsched solve --out`'s schedule.json."""
    @property
    def certificate(self) -> Certificate:
        """The certificate; its `valid` includes the schedule checker's
        verdict."""
    @property
    def report(self) -> Dict[str, Any]:
        """`headline` (the run in one line), `notes` (lines about the run)
        and `files` (further JSON reports by file name, e.g. the SMD-style
        scheduler's "epochs.json")."""

def solve(
    instance: InstanceLike,
    algorithm: str,
    params: Optional[JsonLike] = None,
    seed: int = 0,
) -> Solved:
    """Runs algorithm `algorithm` (one of `ALGORITHMS`) on `instance`, as
    `dmlsched solve` does, with the GIL released.

    Args:
        instance: an `Instance`, a dict, JSON text or a path.
        algorithm: the algorithm's name.
        params: its parameters (a dict, JSON text or a path): any fields of
            its parameter struct; missing fields take their defaults,
            unknown fields are errors.
        seed: the seed of the randomised algorithms (locality,
            locality-batch, rar-rand).

    Returns:
        The schedule, its certificate (checked, and the schedule verified
        by `schedule::verify`: see `Certificate.valid`) and the report.

    Raises:
        InputError: bad input (an unknown name, bad parameters, an
            instance outside the algorithm's model).
        RunError: the run failed.
    """

def allocate(policy: str, input: JsonLike) -> Dict[str, Any]:
    """The allocation of `policy` (one of `ALLOCATION_POLICIES`) on `input`
    in the allocate format (docs/allocate-format.md), with the GIL
    released.

    Returns:
        The answer `dmlsched allocate` prints: `policy`, `objective` (None
        for the FIFO policies), `allocation` (`{"<id>": {"<type>": x}}`),
        `effective_throughput` and `certificate` (None for the FIFO
        policies).

    Raises:
        InputError: an unknown policy or a bad input.
        RunError: the LP failed.
    """

def _simulate(
    instance: InstanceLike,
    policies: Any,
    seeds: List[int],
    params: Optional[Mapping[str, Any]],
    stop: str,
    stop_at_convergence: bool,
    placement: str,
    tiresias_thresholds: Optional[List[float]],
    tiresias_starve_factor: Optional[float],
    round_s: float,
    gpu_prices: Optional[Union[Mapping[str, float], str]],
    workload: Optional[str],
) -> Dict[str, Any]:
    """The Rust half of `dmlsched.simulate` (use that): the runs' CSV
    tables as text (`summary_csv`, `jobs_csv`, `utilization_csv`), their
    `certificates`, `notes` and `runs`."""

def _replay(
    trace: str,
    *,
    format: Optional[str],
    arch: Optional[str],
    start: Optional[str],
    jobs: int,
    gpus: str,
    gpus_per_machine: int,
    ps_servers: Optional[int],
    horizon: Optional[str],
    slot_length: Optional[float],
    utility: Optional[str],
    policies: List[str],
    params: List[Tuple[str, Any]],
    load_scales: List[float],
    seeds: List[int],
    placement: str,
    tiresias_thresholds: Optional[List[float]],
    tiresias_starve_factor: Optional[float],
    round_s: float,
    gpu_prices: Optional[str],
    gavel_throughputs: Optional[str],
    gavel_gpu: str,
    out: Optional[str],
) -> Dict[str, Any]:
    """The Rust half of `dmlsched.replay` (use that): the summary table as
    CSV text (`summary_csv`), one dict per run (`runs`: policy, load_scale,
    seed, workload, cluster, jobs_csv, notes, certificate), the
    `certificates`, `certificates_json`, `failures`, `messages` and the
    replay's `error` ((kind, message) when some runs failed, else None)."""

class _SweepPlan:
    """A sweep's grid, planned (`dmlsched::sweep::Plan`): its distinct
    cells and its tables' rows. Made by `_sweep_plan`."""

    @property
    def cells(self) -> int:
        """The grid's distinct cells."""
    @property
    def rows(self) -> int:
        """The rows of the grid's tables."""
    @property
    def instances(self) -> bool:
        """Whether the grid is of instances (else of trace windows)."""

def _sweep_plan(
    *, text: Optional[str] = None, base: Optional[str] = None, path: Optional[str] = None
) -> _SweepPlan:
    """The Rust half of `dmlsched.sweep` (use that): the grid of JSON `text`
    (relative paths from `base`) or of the file `path`, planned, every cell
    checked."""

def _sweep_shard(shard: str) -> Tuple[int, int]:
    """`"INDEX/COUNT"` read as `--shard`: `(index, count)`."""

def _sweep_run(
    plan: _SweepPlan,
    out: str,
    *,
    workers: Optional[int] = None,
    shard: Optional[str] = None,
    on_start: Optional[Any] = None,
    on_cell: Optional[Any] = None,
) -> Dict[str, Any]:
    """The local back end of `dmlsched.sweep`: the cells the store in `out`
    lacks, on `workers` threads, the GIL released; `on_start(to_run,
    skipped)` and `on_cell(done, total, label, error)` are called with the
    GIL. Returns `cells`, `skipped`, `ran` and `failed` ((label, kind,
    message) tuples, kind "input" or "run")."""

def _sweep_missing(
    plan: _SweepPlan, out: str, *, shard: Optional[str] = None
) -> Tuple[int, List[Tuple[str, str, str]]]:
    """The shard's number of cells, and its cells the store in `out`
    lacks as `(key, label, cell_json)`."""

def _sweep_run_cell(cell_json: str) -> Dict[str, Any]:
    """Runs one cell (what a Ray task runs), the GIL released:
    `summary_csv`, `jobs_csv`, `wall_s` and `error` (None or (kind,
    message))."""

def _sweep_put(out: str, cell_json: str, summary_csv: str, jobs_csv: str, wall_s: float) -> None:
    """Keeps a finished cell's tables in the store in `out`."""

def _sweep_absorb(plan: _SweepPlan, out: str, other: str) -> int:
    """Copies the cells finished in the sweep folder `other` into `out`;
    returns how many."""

def _sweep_tables(plan: _SweepPlan, out: str, *, write: bool) -> Dict[str, Any]:
    """The grid's tables from the store in `out` as CSV text
    (`summary_csv`, `jobs_csv`, `timings_csv`), `complete` and `finished`
    (cells); written into `out` when complete and `write`. Incomplete: the
    finished cells' rows only."""

class Action:
    """A policy's decision about one job. A policy returns a list of them
    from `on_event` (or dicts: `{"action": "run", "job": id, "placement":
    ...}`, `{"action": "pause" | "preempt" | "reject", "job": id}`). The
    actions of one answer are applied together, as one transaction."""

    @staticmethod
    def run(
        job: int,
        placement: PlacementLike,
        gpus: Optional[Sequence[Tuple[int, int]]] = None,
        local: Optional[int] = None,
    ) -> "Action":
        """Run job `job` with `placement` from now until the next change;
        an empty placement pauses it. `gpus`: GPU ids as (machine, index),
        for policies that assign them; `local`: the machine of a LOCAL
        configuration (one PS and its workers there, no NIC charged)."""
    @staticmethod
    def pause(job: int) -> "Action":
        """Pause job `job` (a preemption if it runs)."""
    @staticmethod
    def preempt(job: int) -> "Action":
        """Stop job `job` now; it keeps its progress."""
    @staticmethod
    def reject(job: int) -> "Action":
        """Turn job `job` away for good."""
    @property
    def kind(self) -> Literal["run", "pause", "preempt", "reject", "reserve"]:
        """The action's kind."""
    @property
    def job(self) -> int:
        """The job's id."""
    @property
    def placement(self) -> Optional[Placement]:
        """A run's placement."""

class JobView:
    """One active job at an event, as a policy sees it (a copy)."""

    @property
    def id(self) -> int:
        """The job's id."""
    @property
    def position(self) -> int:
        """Its position in the instance's jobs."""
    @property
    def status(
        self,
    ) -> Literal["not_arrived", "waiting", "running", "paused", "completed", "rejected"]:
        """Where it stands: "waiting" (never started), "running" (holding
        resources) or "paused"; an active job is one of these three, the
        others ("not_arrived", "completed", "rejected") complete the
        simulator's states."""
    @property
    def queued(self) -> bool:
        """Whether it waits for a start (waiting or paused, no plan)."""
    @property
    def running(self) -> bool:
        """Whether it holds an allocation now."""
    @property
    def has_plan(self) -> bool:
        """Whether it holds a plan (a reservation)."""
    @property
    def placement(self) -> Placement:
        """Its allocation now (empty when not running)."""
    @property
    def last_placement(self) -> Placement:
        """Its most recent non-empty allocation (a rigid job resumes only
        there)."""
    @property
    def gpus(self) -> Optional[List[Tuple[int, int]]]:
        """The GPU ids of its allocation, (machine, index), when
        assigned."""
    @property
    def remaining_work(self) -> float:
        """Work left: mini-batches (parameter server) or iterations (ring)."""
    @property
    def total_work(self) -> float:
        """Its whole work, in the same unit."""
    @property
    def attained_gpu_s(self) -> float:
        """GPU-seconds held so far."""
    @property
    def arrival_s(self) -> float:
        """When it arrived, seconds."""
    @property
    def start_s(self) -> Optional[float]:
        """When it first held resources."""
    @property
    def since_s(self) -> float:
        """Since when it runs, is paused or waits."""
    @property
    def last_run_s(self) -> float:
        """The length of its last completed run, seconds."""
    @property
    def preemptions(self) -> int:
        """Its preemptions so far."""
    @property
    def requested_tasks(self) -> Tuple[int, int]:
        """The (workers, ps) the fixed-size baselines run it at."""
    @property
    def min_tasks(self) -> Tuple[int, int]:
        """The fewest (workers, ps) it runs with."""
    @property
    def max_workers(self) -> int:
        """The most workers it runs with."""
    @property
    def architecture(self) -> Literal["parameter_server", "ring_all_reduce"]:
        """The job's architecture."""

class View:
    """The simulator's state at an event, as a policy written in Python
    sees it: a copy made at each event (the time, each machine's free
    resources and one `JobView` per active job: O(machines + active jobs)
    per event), valid after the call. The job models themselves are in
    `instance`, not copied."""

    @property
    def time(self) -> float:
        """The current time, seconds."""
    @property
    def slot(self) -> int:
        """The slot that holds the current time."""
    @property
    def first_plannable_slot(self) -> Optional[int]:
        """The first slot a plan made now may use."""
    @property
    def instance(self) -> Instance:
        """The instance being simulated."""
    @property
    def free(self) -> List[Dict[str, float]]:
        """Each machine's free resources, in the cluster's order: dicts
        with `machine` (its id), `gpus`, `cpu_cores`, `memory_bytes`,
        `storage_bytes`, `nic_bps` (ring reservations charged)."""
    @property
    def jobs(self) -> List[JobView]:
        """The active jobs (arrived, not completed nor rejected), in
        arrival order."""
    @property
    def queued(self) -> List[JobView]:
        """The active jobs that wait for a start, in arrival order."""
    def job(self, id: int) -> Optional[JobView]:
        """The active job with id `id`, or None."""
    def placer(self, rule: str = "best-fit") -> "Placer":
        """A placer over this view's free room, by `rule` (one of
        `PLACEMENT_RULES`)."""

class Placer:
    """The baselines' task placement (`placement::Placer`) over a copy of a
    view's free room: each placement it makes or takes is charged, so the
    next one sees what is left. The built-in policies place with it, so a
    Python policy that places with it places as they do."""

    def __init__(self, view: View, rule: str = "best-fit") -> None:
        """A placer over `view`'s free room (as `view.placer(rule)`)."""
    def place(
        self, job: int, workers: Optional[int] = None, ps: Optional[int] = None
    ) -> Optional[Placement]:
        """Places `workers` workers and `ps` PSs of job `job` (its
        `requested_tasks` when not given), charged to this placer; None,
        and nothing charged, when they do not fit."""
    def take(self, job: int, placement: PlacementLike) -> bool:
        """Takes a given placement of job `job` (to keep it where it is);
        False, and nothing taken, when it does not fit."""
    def release(self, job: int, placement: PlacementLike) -> None:
        """Gives back what a placement of job `job` holds."""
    def may_fit(self, job: int, workers: int, ps: int) -> bool:
        """Whether all machines' free room together could hold the tasks (a
        quick necessary test)."""
    @property
    def free(self) -> List[Dict[str, float]]:
        """The free room left, per machine (dicts as `View.free`)."""
    @property
    def rule(self) -> str:
        """The placement rule's name."""

class Session:
    """Jobs decided one by one over a shared cluster state by an online
    algorithm (`SESSION_ALGORITHMS`), or one per job architecture, as
    `dmlsched session` does (docs/session-protocol.md). Every call releases
    the GIL; the replies are the protocol's reply lines as dicts."""

    def __init__(
        self,
        cluster: Union[InstanceLike, JsonLike],
        algorithm: Union[str, Mapping[str, str]] = "gadget",
        params: Optional[Union[JsonLike, Mapping[str, JsonLike]]] = None,
        past: Optional[Union[InstanceLike, Sequence[Mapping[str, Any]], JsonLike]] = None,
        slot_length: Optional[float] = None,
        window: int = 200,
        seed: int = 0,
    ) -> None:
        """A new session.

        Args:
            cluster: the instance format's `cluster` object (a dict, JSON
                text or a path), or an instance (whose cluster, jobs as
                `past` and slot length are used).
            algorithm: "gadget" (the default), "oasis", "locality", or one
                per architecture: "ps=locality,rar=gadget" or
                `{"ps": "locality", "rar": "gadget"}`.
            params: the algorithm's parameters, or with several algorithms
                `{algorithm: its parameters}` (each a dict, JSON text or a
                path).
            past: jobs like the ones to come, to learn the price bounds
                from: a list of job dicts, or an instance (its jobs).
            slot_length: seconds (default: the instance's, else 60).
            window: the planning window, slots (1 to 2^20).
            seed: the seed of what the algorithms draw.
        """
    def submit(self, job: Union[Mapping[str, Any], str], time: Optional[float] = None) -> Dict[str, Any]:
        """Decides on `job` (the instance format's job object; `arrival_s`
        may be left out) submitted at `time` (default: its `arrival_s`,
        else the session's time).

        Returns:
            The decision: `job`, `admitted`, `segments` (as schedule.json),
            `algorithm`, `utility`, `price`, `certificate` (the session's
            snapshot: `alg`, `trivial_bound`, `guarantee_lost`) and, when
            rejected, `rejection` (`kind`, `reason`).
        """
    def resubmit(self, job: int, time: float) -> Dict[str, Any]:
        """Decides again on a job its session rejected; a decision."""
    def finish(self, job: int, time: float) -> Dict[str, Any]:
        """The job finished: the rest of its plan is released. Returns
        `{"ok", "event", "job", "released", "status"}`."""
    def cancel(self, job: int, time: float) -> Dict[str, Any]:
        """As `finish`, and the job adds no utility."""
    def extend(self, job: int, time: float, more_s: float) -> Dict[str, Any]:
        """The job runs past its plan and needs about `more_s` seconds more:
        its last segment is extended if there is room, else it is
        preempted."""
    def usage(
        self, machine: int, from_s: float, to_s: float, resources: Mapping[str, float]
    ) -> Dict[str, Any]:
        """Capacity used outside the sessions on `machine` from `from_s` to
        `to_s`; returns its id and the slots and GPU ids held."""
    def certificate(self, algorithm: Optional[str] = None) -> Certificate:
        """The session's full certificate now (with several algorithms,
        name the one)."""
    def certificates(self) -> Dict[str, Certificate]:
        """Every session's full certificate, by algorithm."""
    def status(self, job: int) -> Optional[str]:
        """"admitted", "rejected", "finished", "cancelled" or "preempted";
        None if never submitted."""
    def save(self, path: PathLike) -> None:
        """Saves the session to `path`, in the layout of `dmlsched session
        --state` (written beside it with the extension `.tmp`, then renamed
        over it)."""
    @staticmethod
    def load(path: PathLike) -> "Session":
        """The session saved in `path` (by `save` or `dmlsched session
        --state`): it decides as the saved one would have."""
    @property
    def now(self) -> float:
        """The session's time, seconds."""
    @property
    def algorithms(self) -> List[str]:
        """Its algorithms, one per job architecture."""
    @property
    def window(self) -> int:
        """The planning window, slots."""
    @property
    def slot_length_s(self) -> float:
        """The slot length, seconds."""
