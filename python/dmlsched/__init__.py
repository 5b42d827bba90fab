"""dmlsched: optimization algorithms, with certificates, for scheduling
distributed machine-learning training jobs on shared GPU clusters.

The Python bindings of the `dmlsched` Rust crate:

- `Instance`: a validated instance (cluster, jobs, horizon), from a dict,
  JSON text or a file; every function that takes an instance also takes
  any of the three.
- `solve(instance, algorithm, params, seed)`: one algorithm (`ALGORITHMS`),
  its schedule, `Certificate` and report.
- `allocate(policy, input)`: a heterogeneity-aware allocation policy
  (`ALLOCATION_POLICIES`) on the allocate format.
- `simulate(instance, policies, seeds, ...)`: the simulator under built-in
  policies and policies written in Python (`View`, `JobView`, `Placer`,
  `Action`), with the command line's tables as pandas DataFrames.
- `replay(trace, ...)`: a window of a real cluster trace under policies,
  as `dmlsched replay` runs it (keyword arguments named after its flags),
  with its tables as pandas DataFrames and the algorithms' certificates.
- `sweep(grid, out, ...)`: a grid of replays (or simulations) run cell by
  cell into a folder that keeps every finished cell (resumable), on this
  machine's cores or as Ray tasks, as `dmlsched sweep` runs it; its tables
  as pandas DataFrames (`Sweep`).
- `Session`: jobs decided one by one over a shared cluster state
  (`SESSION_ALGORITHMS`), as `dmlsched session` does.

Errors: `DmlschedError`, and its subclasses `InputError` (bad input) and
`RunError` (a run that failed on valid input), with the library's
messages. Every run releases the GIL.
"""

from ._native import (
    ALGORITHM_POLICIES,
    ALGORITHMS,
    ALLOCATION_POLICIES,
    BASELINES,
    PLACEMENT_RULES,
    RING_BASELINES,
    ROUND_POLICIES,
    SESSION_ALGORITHMS,
    Action,
    Bound,
    Certificate,
    DmlschedError,
    Guarantee,
    InputError,
    Instance,
    JobView,
    Placer,
    RunError,
    Session,
    Solved,
    View,
    __version__,
    allocate,
    solve,
)
from ._replay import ReplayResult, replay
from ._simulation import Simulation, simulate
from ._sweep import Sweep, sweep

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_POLICIES",
    "ALLOCATION_POLICIES",
    "BASELINES",
    "PLACEMENT_RULES",
    "RING_BASELINES",
    "ROUND_POLICIES",
    "SESSION_ALGORITHMS",
    "Action",
    "Bound",
    "Certificate",
    "DmlschedError",
    "Guarantee",
    "InputError",
    "Instance",
    "JobView",
    "Placer",
    "ReplayResult",
    "RunError",
    "Session",
    "Simulation",
    "Solved",
    "Sweep",
    "View",
    "__version__",
    "allocate",
    "replay",
    "simulate",
    "solve",
    "sweep",
]
