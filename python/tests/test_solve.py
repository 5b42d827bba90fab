"""`solve`: every algorithm on every shipped instance, as `dmlsched
solve` runs them (tests/pins/outputs.txt pins which ones it accepts)."""

from __future__ import annotations

import math

import pytest

import dmlsched
from conftest import DATA, INSTANCES

# The (algorithm, instance) pairs `dmlsched solve` accepts; it refuses
# every other pair with exit code 2 (tests/pins/outputs.txt).
ACCEPTED = {
    ("oasis", "instance_ps"),
    ("locality", "instance_ps"),
    ("gadget", "instance_ring"),
    ("gadget", "instance_ring_batch"),
    ("sjf-bco", "instance_ring_batch"),
    ("rar-ff", "instance_ring_batch"),
    ("rar-ls", "instance_ring_batch"),
    ("rar-rand", "instance_ring_batch"),
    ("smd", "instance_layered"),
}


def test_every_algorithm_is_covered():
    # locality-batch refuses every shipped instance (each has a job that
    # arrives after the batch's start); test_locality_batch runs it.
    assert {a for a, _ in ACCEPTED} | {"locality-batch"} == set(dmlsched.ALGORITHMS)


def check_certificate(c: dmlsched.Certificate):
    """A certificate that passes its checks, with its bound on the
    optimum's side of the objective."""
    assert c.valid, c.problems
    assert c.problems == []
    c.check()
    assert c.bound.valid and c.bound.usable
    tol = 1e-9 * max(1.0, abs(c.objective))
    if c.maximise:
        assert c.sense == "maximise"
        assert c.bound.value >= c.objective - tol
        assert c.best_bound >= c.objective - tol
    else:
        assert c.sense == "minimise"
        assert c.bound.value <= c.objective + tol
        assert c.best_bound <= c.objective + tol
    ratio = c.achieved_ratio
    assert math.isnan(ratio) or ratio >= 1 - 1e-9
    for g in c.guarantees:
        assert isinstance(g.expression, str) and g.expression
        assert isinstance(g.source, str) and g.source
        assert g.valid == (g.reasons == [])
    assert c.to_dict()["algorithm"] == c.algorithm
    assert str(c).startswith(c.algorithm)


@pytest.mark.parametrize("path", INSTANCES, ids=lambda p: p.stem)
@pytest.mark.parametrize("algorithm", dmlsched.ALGORITHMS)
def test_solve_certificate(algorithm, path):
    if (algorithm, path.stem) not in ACCEPTED:
        with pytest.raises(dmlsched.InputError):
            dmlsched.solve(path, algorithm)
        return
    run = dmlsched.solve(path, algorithm, seed=0)
    inst = dmlsched.Instance.from_file(path)
    assert run.algorithm == algorithm
    assert sorted(j["job"] for j in run.schedule["jobs"]) == sorted(inst.job_ids)
    check_certificate(run.certificate)
    assert set(run.report) == {"headline", "notes", "files"}


def test_locality_batch():
    # The offline batch: instance_ps.json with every job present at 0.
    d = dmlsched.Instance.from_file(DATA / "instance_ps.json").to_dict()
    for j in d["jobs"]:
        j["arrival_s"] = 0.0
    run = dmlsched.solve(d, "locality-batch", seed=0)
    check_certificate(run.certificate)
    assert run.certificate.bound.kind == "lp_primal"


def test_solve_takes_dicts_json_and_params():
    path = DATA / "instance_ring_batch.json"
    text = path.read_text()
    inst = dmlsched.Instance.from_json(text)
    by_path = dmlsched.solve(str(path), "gadget")
    by_text = dmlsched.solve(text, "gadget")
    by_dict = dmlsched.solve(inst.to_dict(), "gadget")
    assert by_path.schedule == by_text.schedule == by_dict.schedule
    with_params = dmlsched.solve(inst, "gadget", params={"u_scale": 2.0})
    with_text = dmlsched.solve(inst, "gadget", params='{"u_scale": 2.0}')
    assert with_params.schedule == with_text.schedule
    assert by_path.certificate.objective == by_dict.certificate.objective


def test_instance_properties():
    inst = dmlsched.Instance.from_file(DATA / "instance_ps.json")
    assert inst.n_jobs == len(inst) == len(inst.job_ids)
    assert inst.n_machines == len(inst.machine_ids)
    assert inst.horizon_s == inst.horizon_slots * inst.slot_length_s
    assert inst.label == "instance_ps.json"
    d = inst.to_dict()
    again = dmlsched.Instance(d)
    assert again.to_dict() == d
    assert inst.job(inst.job_ids[0])["id"] == inst.job_ids[0]
    assert inst.job(10**6) is None
    assert isinstance(inst.gpu_types, list)
