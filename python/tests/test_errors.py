"""Errors: bad input is InputError and a failed run RunError, both
DmlschedError, with the library's messages."""

from __future__ import annotations

import json

import pytest

import dmlsched
from conftest import DATA


def test_hierarchy():
    assert issubclass(dmlsched.InputError, dmlsched.DmlschedError)
    assert issubclass(dmlsched.RunError, dmlsched.DmlschedError)
    assert issubclass(dmlsched.DmlschedError, Exception)
    assert not issubclass(dmlsched.InputError, dmlsched.RunError)


def test_errors():
    ps = DATA / "instance_ps.json"
    # A bad instance dict: the library's JSON error, with the field's path.
    bad = json.loads(ps.read_text())
    bad["jobs"][0]["architecture"]["parameter_server"]["epochs"] = "x"
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.Instance.from_dict(bad)
    assert str(info.value).startswith(
        'JSON: jobs[0].architecture.parameter_server.epochs: invalid type: string "x", expected u32'
    )
    # An invalid instance: the model's error.
    bad = json.loads(ps.read_text())
    bad["jobs"][0]["arrival_s"] = -1.0
    with pytest.raises(dmlsched.InputError, match="^invalid instance: "):
        dmlsched.solve(bad, "oasis")
    # An unknown algorithm: the registry's error.
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.solve(ps, "no-such-algorithm")
    assert str(info.value) == (
        "unknown algorithm no-such-algorithm (known: " + ", ".join(dmlsched.ALGORITHMS) + ")"
    )
    # A NaN parameter: JSON holds no NaN; it goes as the crate's "nan",
    # which a parameter refuses.
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.solve(ps, "oasis", params={"u_scale": float("nan")})
    assert str(info.value).startswith('JSON: invalid type: string "nan", expected f64')
    # A NaN where the library validates numbers: its own message, after
    # the flag's name, as the command line says it.
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.simulate(ps, ["tiresias"], tiresias_thresholds=[float("nan")])
    assert str(info.value) == (
        "--tiresias-thresholds / --tiresias-starve-factor: "
        "simulation: invalid parameters of policy tiresias: threshold 1 is NaN: "
        "thresholds must be finite and > 0 GPU-seconds"
    )
    # An invalid parameter value: the algorithm's own check.
    with pytest.raises(dmlsched.InputError, match="^OASiS: "):
        dmlsched.solve(ps, "oasis", params={"u_scale": -1.0})
    # A missing file: the path and the system's error.
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.solve(DATA / "no-such-file.json", "oasis")
    assert str(info.value).startswith(str(DATA / "no-such-file.json") + ": ")
    with pytest.raises(dmlsched.InputError):
        dmlsched.Instance.from_file(DATA / "no-such-file.json")
    # Malformed JSON text.
    with pytest.raises(dmlsched.InputError, match="^JSON: "):
        dmlsched.Instance.from_json("{not json")
    # Names the simulator does not know.
    with pytest.raises(dmlsched.InputError, match="^unknown policy nope "):
        dmlsched.simulate(ps, ["fifo", "nope"])
    with pytest.raises(dmlsched.InputError, match="^unknown placement rule `worst-fit`"):
        dmlsched.simulate(ps, ["fifo"], placement="worst-fit")
    with pytest.raises(dmlsched.InputError, match="takes no parameters"):
        dmlsched.simulate(ps, ["fifo"], params={"fifo": {}})
    with pytest.raises(dmlsched.InputError, match="needs --gpu-prices"):
        dmlsched.simulate(ps, ["gavel-max-throughput-per-cost"])
    with pytest.raises(dmlsched.InputError, match="^--round-s 0: "):
        dmlsched.simulate(ps, ["fifo"], round_s=0)
    with pytest.raises(dmlsched.InputError, match="^unknown allocation policy `nope`"):
        dmlsched.allocate("nope", DATA / "allocate.json")
    with pytest.raises(dmlsched.InputError, match="^not an allocation input: "):
        dmlsched.allocate("fifo", {"gpu_types": {"k80": 1}, "jobs": [], "extra": 1})
    # An argument that is not JSON at all.
    with pytest.raises(dmlsched.InputError, match="is not JSON"):
        dmlsched.Instance.from_dict({"cluster": object()})


def test_a_model_refusal_is_input():
    # OASiS on a cluster whose machines host both roles: outside its model.
    with pytest.raises(dmlsched.InputError, match="^OASiS: cluster not supported"):
        dmlsched.solve(DATA / "instance_ring.json", "oasis")


def test_a_bad_params_file_is_named(tmp_path):
    # As the command line names a --params file whose JSON the algorithm
    # cannot read.
    bad = tmp_path / "oasis.json"
    bad.write_text('{"u_scale": "high"}')
    ps = DATA / "instance_ps.json"
    with pytest.raises(dmlsched.InputError) as info:
        dmlsched.simulate(ps, ["oasis"], params={"oasis": str(bad)})
    assert str(info.value).startswith(f"{bad}: JSON: ")
    # Given as a dict, there is no file to name.
    with pytest.raises(dmlsched.InputError, match="JSON: "):
        dmlsched.simulate(ps, ["oasis"], params={"oasis": {"u_scale": "high"}})
