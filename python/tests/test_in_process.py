"""What the Python API shows names the user's own model: a ModelProto is
``<in-memory model>`` in messages, commands and results, never the
temporary file the binary read, and no result points at a file that is
gone when the call returns. A misspelled keyword is a TypeError naming the
close match, as Python says for a function's own parameters."""

from __future__ import annotations

import os
import re

import pytest

import attnopt


def temp_paths(text: str):
    """Absolute paths in text that lie in a temporary attnopt- folder."""
    return re.findall(r"/[^\s\"']*attnopt-[^\s\"']*", text)


def test_messages_name_the_in_memory_model(sagan):
    onnx = pytest.importorskip("onnx")
    m = onnx.load(str(sagan))
    with pytest.raises(attnopt.AttnoptError) as e:
        attnopt.inspect(m, shape={"nope": (1, 2)})
    assert e.value.returncode == 2
    assert e.value.message.startswith("attnopt: <in-memory model>: "), e.value.message
    assert "<in-memory model>" in e.value.command
    assert temp_paths(str(e.value)) == [] and temp_paths(" ".join(e.value.command)) == []


def test_two_in_memory_models_are_told_apart(sagan):
    onnx = pytest.importorskip("onnx")
    m = onnx.load(str(sagan))
    res = attnopt.diff(m, attnopt.rewrite(m).model)
    text = repr(res.json)
    assert "<in-memory model 1>" in text and "<in-memory model 2>" in text, text[:400]
    assert temp_paths(text) == []


def test_rewrite_of_a_model_proto_points_at_no_deleted_file(sagan):
    onnx = pytest.importorskip("onnx")
    res = attnopt.rewrite(onnx.load(str(sagan)), validate=True, runtime="go")
    assert res.output is None and res.model is not None
    assert "wrote <in-memory rewritten model (result.model)>" in res.stdout, res.stdout
    everything = res.stdout + repr(res.report)
    assert temp_paths(everything) == [], everything
    # Every absolute path the result names still exists.
    for p in re.findall(r"(/[^\s\"',()]+\.(?:onnx|so|json))", everything):
        assert os.path.exists(p), f"the result names {p}, which does not exist"


@pytest.mark.parametrize("call, wrong, close", [
    (lambda m: attnopt.rewrite(m, windw=(8, 8)), "windw", "window="),
    (lambda m: attnopt.rewrite(m, targt="ort"), "targt", "target="),
    (lambda m: attnopt.inspect(m, explian=True), "explian", "explain="),
    (lambda m: attnopt.validate(m, m, sed=3), "sed", "seed="),
    (lambda m: attnopt.check(m, "1GiB", strct=True), "strct", "strict="),
    (lambda m: attnopt.diff(m, m, dims={"batch": 1}), "dims", "dim="),
])
def test_misspelled_keyword_is_a_type_error(sagan, call, wrong, close):
    with pytest.raises(TypeError) as e:
        call(sagan)
    assert f"unexpected keyword argument '{wrong}'; did you mean {close}?" in str(e.value), str(e.value)
    assert not os.path.exists(str(sagan).replace(".onnx", ".attnopt.onnx")), "a refused call wrote a file"


def test_unrelated_keyword_lists_what_the_command_takes(sagan):
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'zzzzzz'; it takes .*memory_budget="):
        attnopt.check(sagan, "1GiB", zzzzzz=1)


def test_library_info_says_what_the_library_runs():
    info = attnopt.library_info()
    assert info.path == attnopt.get_library_path()
    assert info.cpu_isas[:1] == ["generic"] and info.cpu_selected in info.cpu_supported, info
    assert info.on_cuda.startswith(("yes: ", "no: ")), info.on_cuda
    if os.environ.get("ATTNOPT_EXPECT_CUDA_LIBRARY") == "1":
        assert info.cuda.startswith("13."), info
        assert info.cuda_archs == ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "compute_90"], info
    if not info.cuda_devices:
        assert not info.runs_on_cuda and info.cuda_error, info
    try:
        import onnxruntime
    except ImportError:
        return
    assert info.providers == onnxruntime.get_available_providers(), info.providers
    if "CUDAExecutionProvider" not in info.providers:
        assert not info.runs_on_cuda
