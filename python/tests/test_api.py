"""The installed package: console command, library, inspect, rewrite, errors,
and the rewritten model in ONNX Runtime (when onnxruntime is installed)."""

from __future__ import annotations

import ctypes
import hashlib
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import attnopt
from conftest import BERT_DYNAMIC, SAGAN


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_console_command_is_the_go_binary():
    exe = Path(sysconfig.get_path("scripts")) / "attnopt"
    assert exe.read_bytes()[:4] == b"\x7fELF", "the attnopt command must be the binary, not a Python shim"
    assert Path(attnopt.binary_path()) == exe
    p = subprocess.run([str(exe), "inspect", str(SAGAN)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "1 attention site(s)" in p.stdout


def test_attnopt_binary_env_overrides(monkeypatch, tmp_path):
    installed = attnopt.binary_path()
    monkeypatch.setenv("ATTNOPT_BINARY", installed)
    assert attnopt.binary_path() == installed
    monkeypatch.setenv("ATTNOPT_BINARY", str(tmp_path / "nothing"))
    with pytest.raises(FileNotFoundError, match="ATTNOPT_BINARY"):
        attnopt.inspect(SAGAN)


def test_library_exports_register_custom_ops():
    path = Path(attnopt.get_library_path())
    assert path.is_absolute() and path.name == "libattnopt_ort.so"
    lib = ctypes.CDLL(str(path))  # needs no libonnxruntime: ORT hands it its API at registration
    assert lib.RegisterCustomOps


def test_import_does_not_load_onnxruntime():
    code = "import sys, attnopt; print('onnxruntime' in sys.modules)"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False"


def test_inspect_is_the_cli_json():
    got = attnopt.inspect(SAGAN)
    cli = subprocess.check_output([attnopt.binary_path(), "inspect", str(SAGAN), "--json"])
    assert got == json.loads(cli)
    assert [s["softmax"] for s in got["sites"]] == ["/softmax/Softmax"]
    assert got["totals"] == {"sites": 1, "score_bytes": 256 * 256 * 4, "fused_bytes": 148480}


@pytest.mark.parametrize(
    "flags, score_bytes",
    [
        ({}, None),  # symbolic batch and seq: unknown until pinned
        ({"dim": {"batch": 2, "seq": 128}}, 2 * 4 * 128 * 128 * 4),
        ({"dim": {"batch": 1, "seq": 64}, "explain": True}, 1 * 4 * 64 * 64 * 4),
    ],
)
def test_inspect_flags(flags, score_bytes):
    assert attnopt.inspect(BERT_DYNAMIC, **flags)["sites"][0]["score_bytes"] == score_bytes


def test_rewrite_writes_beside_the_input(sagan):
    before = sha(sagan)
    res = attnopt.rewrite(sagan)
    assert res.output == str(sagan.parent / "sagan.attnopt.onnx")
    assert Path(res.output).is_file() and sha(sagan) == before
    assert res.report["schema"] == "attnopt.report/v1"
    assert res.report["totals"]["fused"] == 1
    assert res.report["rewrite"]["op"] == "attnopt.FlashAttention"
    assert "1 of 1 site(s) fused (target attnopt)" in res.stdout
    assert "report (json)" not in res.stdout  # the temporary report is the API's business


def test_rewrite_dst_target_and_validate(sagan, tmp_path):
    dst = tmp_path / "fused.onnx"
    res = attnopt.rewrite(sagan, dst, target="ort", validate=True)
    assert res.output == str(dst) and dst.is_file()
    assert res.report["rewrite"]["op"] == "com.microsoft.MultiHeadAttention"
    v = res.report["validation"]
    assert v["pass"] and v["checks"][0]["outputs"][0]["max_abs"] < 1e-4


def test_rewrite_with_a_report_file(sagan, tmp_path):
    md = tmp_path / "report.md"
    res = attnopt.rewrite(sagan, report=md)
    assert res.report is None
    assert md.read_text(encoding="utf-8").startswith("## attnopt rewrite report")
    assert f"report (md): {md}" in res.stdout


def _garbage(tmp_path: Path) -> Path:
    p = tmp_path / "garbage.onnx"
    p.write_bytes(b"\xff" * 64)
    return p


@pytest.mark.parametrize(
    "call, code, says",
    [
        (lambda t, m: attnopt.inspect(t / "missing.onnx"), 2, "missing.onnx"),
        (lambda t, m: attnopt.inspect(_garbage(t)), 2, "garbage.onnx"),
        (lambda t, m: attnopt.rewrite(m, target="bogus"), 2, "bogus"),
        (lambda t, m: attnopt.rewrite(m, no_such_flag=True), 2, "unknown flag: --no-such-flag"),
        (lambda t, m: attnopt.rewrite(m, m), 2, "attnopt never modifies its input"),
        (lambda t, m: attnopt.rewrite(m, window="eight"), 2, "--window"),
    ],
)
def test_errors_carry_the_cli_message_and_exit_code(sagan, tmp_path, call, code, says):
    with pytest.raises(attnopt.AttnoptError) as e:
        call(tmp_path, sagan)
    assert e.value.returncode == code
    assert e.value.message.startswith("attnopt: ") and says in e.value.message
    assert str(e.value) == f"{e.value.message} (exit {code})"


@pytest.mark.parametrize("call", [lambda m: attnopt.inspect(m, json=True), lambda m: attnopt.rewrite(m, output="x")])
def test_reserved_keywords(sagan, call):
    with pytest.raises(TypeError):
        call(sagan)


def test_register_without_onnxruntime():
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install onnxruntime"):
            attnopt.register()
    else:
        pytest.skip("onnxruntime is installed")


def test_rewritten_model_matches_in_onnxruntime(sagan):
    ort = pytest.importorskip("onnxruntime")
    np = pytest.importorskip("numpy")
    res = attnopt.rewrite(sagan)
    x = np.random.default_rng(1).standard_normal((1, 64, 16, 16), dtype=np.float32)
    naive = ort.InferenceSession(str(sagan), providers=["CPUExecutionProvider"])
    so = attnopt.register()  # a new SessionOptions
    assert isinstance(so, ort.SessionOptions)
    fused = ort.InferenceSession(res.output, so, providers=["CPUExecutionProvider"])
    want, got = naive.run(None, {"x": x})[0], fused.run(None, {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
    # The same through get_library_path, as with onnxruntime-extensions.
    so2 = ort.SessionOptions()
    so2.register_custom_ops_library(attnopt.get_library_path())
    got2 = ort.InferenceSession(res.output, so2, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got2, got)
    # Without the library ORT cannot run the fused op: registration is what makes it work.
    with pytest.raises(Exception, match="attnopt"):
        ort.InferenceSession(res.output, providers=["CPUExecutionProvider"])


def test_rewrite_validates_in_this_pythons_onnxruntime(sagan):
    ort = pytest.importorskip("onnxruntime")
    from attnopt._library import onnxruntime_library_path

    lib = Path(onnxruntime_library_path())
    assert lib.name == f"libonnxruntime.so.{ort.__version__}"
    assert lib.parent.parent == Path(ort.__file__).parent
    res = attnopt.rewrite(sagan, validate=True, runtime="ort")
    v = res.report["validation"]
    assert v["runtime"] == "ort" and v["pass"]
    assert v["checks"][0]["outputs"][0]["max_abs"] < 1e-4
