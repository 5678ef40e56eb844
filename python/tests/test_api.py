"""The installed package: console command, library, the five commands on
paths and on onnx.ModelProto, typed results, errors, and the rewritten
model in ONNX Runtime (when onnxruntime is installed)."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import attnopt
from conftest import BERT_DYNAMIC, REPO, SAGAN

NO_SITE = REPO / "testdata" / "models" / "neg_softmax_query_axis" / "model.onnx"  # a Softmax that is no site


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def test_console_command_is_the_go_binary():
    exe = Path(sysconfig.get_path("scripts")) / "attnopt"
    assert exe.read_bytes()[:4] == b"\x7fELF", "the attnopt command must be the binary, not a Python shim"
    assert Path(attnopt.binary_path()) == exe
    p = subprocess.run([str(exe), "inspect", str(SAGAN)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "1 attention site(s)" in p.stdout
    v = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert v.stdout.startswith(f"attnopt {attnopt.__version__} ("), v.stdout


def test_attnopt_binary_env_overrides(monkeypatch, tmp_path):
    installed = attnopt.binary_path()
    monkeypatch.setenv("ATTNOPT_BINARY", installed)
    assert attnopt.binary_path() == installed
    monkeypatch.setenv("ATTNOPT_BINARY", str(tmp_path / "nothing"))
    with pytest.raises(attnopt.AttnoptError, match="ATTNOPT_BINARY") as e:
        attnopt.inspect(SAGAN)
    assert e.value.returncode == 127


def test_library_exports_register_custom_ops():
    path = Path(attnopt.get_library_path())
    assert path.is_absolute() and path.name == "libattnopt_ort.so"
    lib = ctypes.CDLL(str(path))  # needs no libonnxruntime: ORT hands it its API at registration
    assert lib.RegisterCustomOps


def test_import_loads_neither_onnx_nor_onnxruntime():
    code = "import sys, attnopt; print('onnxruntime' in sys.modules, 'onnx' in sys.modules)"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False False"


def test_inspect(as_model):
    got = attnopt.inspect(as_model(SAGAN))
    assert isinstance(got, attnopt.InspectResult)
    (site,) = got.sites
    assert isinstance(site, attnopt.Site)
    assert (site.softmax, site.q_len, site.kv_len, site.head_dim, site.v_head_dim) == ("/softmax/Softmax", 256, 256, 8, 64)
    # What the fused op adds at 256 query rows: nothing (one chunk packs its
    # tiles as it reads them); Q, K, V and O are in both graphs.
    assert (site.score_bytes, site.fused_bytes, site.io_bytes) == (256 * 256 * 4, 0, 256 * (8 + 8 + 64 + 64) * 4)
    assert (got.score_bytes, got.fused_bytes, got.io_bytes, got.fused) == (256 * 256 * 4, 0, 147456, [])
    assert got.json["schema"] == "attnopt.inspect/v1" and got.json["version"] == attnopt.__version__
    # The CLI's document, but for where the model was and the command line.
    cli = json.loads(subprocess.check_output([attnopt.binary_path(), "inspect", str(SAGAN), "--json"]))
    for d in (cli, got.json):
        d.pop("provenance")
        d.pop("model")
    assert got.json == cli


@pytest.mark.parametrize(
    "flags, score_bytes",
    [
        ({}, None),  # symbolic batch and seq: unknown until pinned
        ({"dim": {"batch": 2, "seq": 128}}, 2 * 4 * 128 * 128 * 4),
        ({"dim": {"batch": 1, "seq": 64}, "explain": True}, 1 * 4 * 64 * 64 * 4),
    ],
)
def test_inspect_flags(flags, score_bytes):
    assert attnopt.inspect(BERT_DYNAMIC, **flags).sites[0].score_bytes == score_bytes


def test_rewrite_writes_beside_the_input(sagan):
    before = sha(sagan)
    res = attnopt.rewrite(sagan)
    assert res.output == str(sagan.parent / "sagan.attnopt.onnx")
    assert Path(res.output).is_file() and sha(sagan) == before
    assert res.report["schema"] == "attnopt.report/v1"
    assert (res.fused, res.target, res.op) == (1, "attnopt", "attnopt.FlashAttention")
    assert [(s.softmax, s.status, s.bytes_before, s.bytes_after) for s in res.sites] == [("/softmax/Softmax", "fused", 262144, 0)]
    assert "custom-op library" in res.runs_with and res.validation is None
    assert "1 of 1 site(s) fused (target attnopt)" in res.stdout
    assert "report (json)" not in res.stdout  # the temporary report is the API's business


def test_rewrite_returns_the_model(sagan, tmp_path):
    onnx = pytest.importorskip("onnx")
    res = attnopt.rewrite(sagan)
    assert [n.op_type for n in res.model.graph.node if n.domain == "attnopt"] == ["FlashAttention"]
    # A ModelProto in, a ModelProto out; no file unless dst is given.
    res = attnopt.rewrite(onnx.load(str(sagan)))
    assert res.output is None and res.fused == 1
    assert isinstance(res.model, onnx.ModelProto)
    assert "FlashAttention" in [n.op_type for n in res.model.graph.node]
    dst = tmp_path / "fused.onnx"
    res = attnopt.rewrite(onnx.load(str(sagan)), dst)
    assert res.output == str(dst) and dst.is_file() and res.model.graph.node


def test_rewrite_model_needs_onnx(sagan):
    if has("onnx"):
        pytest.skip("onnx is installed")
    res = attnopt.rewrite(sagan)
    with pytest.raises(ImportError, match="pip install onnx"):
        res.model


def test_rewrite_dst_target_and_validate(sagan, tmp_path, as_model):
    dst = tmp_path / "fused.onnx"
    res = attnopt.rewrite(as_model(sagan), dst, target="ort", validate=True, runtime="go")
    assert res.output == str(dst) and dst.is_file()
    assert res.op == "com.microsoft.MultiHeadAttention"
    v = res.validation
    assert isinstance(v, attnopt.ValidateResult) and v.passed and v.runtime.name == "go" and v.seed == 1
    assert v.checks[0].outputs[0].max_abs < 1e-4 and res.sites[0].max_abs < 1e-4


def test_rewrite_with_a_report_file(sagan, tmp_path):
    md = tmp_path / "report.md"
    res = attnopt.rewrite(sagan, report=md)
    assert res.fused == 1  # the typed report is there as well
    assert md.read_text(encoding="utf-8").startswith("## attnopt rewrite report")
    assert f"report (md): {md}" in res.stdout


def test_validate(sagan, tmp_path, as_model):
    out = attnopt.rewrite(sagan, tmp_path / "fused.onnx").output
    v = attnopt.validate(as_model(sagan), as_model(Path(out)), runtime="go", seed=3)
    assert v.passed and (v.runtime.name, v.scope, v.seed) == ("go", "sites", 3)
    (check,) = v.checks
    assert check.site == 0 and check.passed and check.outputs[0].max_abs < 1e-4 and check.outputs[0].cosine > 0.9999
    assert v.json["schema"] == "attnopt.validate/v1"
    m = attnopt.validate(sagan, out, runtime="go", scope="model")
    assert m.passed and m.checks[0].name == "model"


def test_validate_failures_carry_the_result(sagan, tmp_path):
    # A model without attention against itself: nothing to compare, exit 3.
    with pytest.raises(attnopt.AttnoptError) as e:
        attnopt.validate(NO_SITE, NO_SITE, runtime="go")
    assert e.value.returncode == 3 and not e.value.result.passed and "nothing to validate" in e.value.message
    # A model with a site against itself, and a rewrite that fused none of
    # its sites: no site was rewritten, so nothing is compared either.
    kept = attnopt.rewrite(sagan, tmp_path / "kept.onnx", min_scores="1GiB").output
    for rewritten in (sagan, kept):
        with pytest.raises(attnopt.AttnoptError) as e:
            attnopt.validate(sagan, rewritten, runtime="go")
        r = e.value.result
        assert e.value.returncode == 3 and "was rewritten; nothing to validate" in e.value.message
        assert (r.passed, r.no_checks, r.checks) == (False, True, [])
    onnx = pytest.importorskip("onnx")
    # A rewrite whose scale is doubled: out of tolerance, exit 1.
    bad = attnopt.rewrite(sagan, tmp_path / "fused.onnx").model
    (fa,) = [n for n in bad.graph.node if n.op_type == "FlashAttention"]
    (scale,) = [a for a in fa.attribute if a.name == "scale"]
    scale.f *= 2
    with pytest.raises(attnopt.AttnoptError) as e:
        attnopt.validate(sagan, bad, runtime="go")
    assert e.value.returncode == 1 and "validation failed" in e.value.message
    assert isinstance(e.value.result, attnopt.ValidateResult) and not e.value.result.checks[0].passed


def test_diff(sagan, tmp_path, as_model):
    out = attnopt.rewrite(sagan, tmp_path / "fused.onnx").output
    d = attnopt.diff(as_model(sagan), as_model(Path(out)))
    assert isinstance(d, attnopt.DiffResult) and d.changed
    assert [(s.status, s.op) for s in d.sites] == [("fused", "attnopt.FlashAttention")]
    assert (d.bytes_before, d.bytes_after, d.nodes_removed, d.nodes_added) == (262144, 0, 4, 4)
    assert not attnopt.diff(as_model(sagan), as_model(sagan)).changed


def test_check(sagan, tmp_path, as_model):
    c = attnopt.check(as_model(sagan), "1GiB")
    assert isinstance(c, attnopt.CheckResult) and c.passed and c.budget_bytes == 1 << 30
    assert [(s.softmax, s.score_bytes, s.status) for s in c.sites] == [("/softmax/Softmax", 262144, "ok")]
    with pytest.raises(attnopt.AttnoptError) as e:
        attnopt.check(as_model(sagan), 200 * 1024)
    assert e.value.returncode == 1 and e.value.result.over == 1 and e.value.result.sites[0].status == "over"
    out = attnopt.rewrite(sagan, tmp_path / "fused.onnx").output
    fused = attnopt.check(as_model(Path(out)), "200KiB")
    assert fused.passed and fused.sites == [] and [f.op for f in fused.fused] == ["FlashAttention"]


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
        (lambda t, m: attnopt.rewrite(m, m), 2, "attnopt never modifies its input"),
        (lambda t, m: attnopt.rewrite(m, window="eight"), 2, "--window"),
        (lambda t, m: attnopt.validate(m, t / "missing.onnx"), 2, "missing.onnx"),
        (lambda t, m: attnopt.validate(m, m, runtime="tpu"), 2, "--runtime"),
        (lambda t, m: attnopt.diff(m, _garbage(t)), 2, "garbage.onnx"),
        (lambda t, m: attnopt.check(m, "lots"), 2, "--memory-budget"),
        # Paths that start with "-" are paths, never flags (issue 24).
        (lambda t, m: attnopt.rewrite("--help"), 2, "--help: cannot read"),
        (lambda t, m: attnopt.inspect("--json"), 2, "--json: cannot read"),
        (lambda t, m: attnopt.validate("-o", m), 2, "-o: cannot read"),
        (lambda t, m: attnopt.diff(m, "--version"), 2, "--version: cannot read"),
        (lambda t, m: attnopt.check("-h", "1GiB"), 2, "-h: cannot read"),
    ],
)
def test_errors_carry_the_cli_message_and_exit_code(sagan, tmp_path, call, code, says):
    with pytest.raises(attnopt.AttnoptError) as e:
        call(tmp_path, sagan)
    assert e.value.returncode == code
    assert e.value.message.startswith("attnopt: ") and says in e.value.message, e.value.message
    assert str(e.value) == f"{e.value.message} (exit {code})"


def test_a_path_starting_with_a_dash_is_a_path(tmp_path, monkeypatch):
    (tmp_path / "-m.onnx").write_bytes(SAGAN.read_bytes())
    monkeypatch.chdir(tmp_path)
    res = attnopt.rewrite("-m.onnx")
    assert res.output == "-m.attnopt.onnx" and (tmp_path / "-m.attnopt.onnx").is_file()
    assert attnopt.inspect("-m.onnx").sites[0].softmax == "/softmax/Softmax"


@pytest.mark.parametrize(
    "script, call",
    [
        ("echo not json", lambda m: attnopt.inspect(m)),
        ("echo '[1, 2]'", lambda m: attnopt.diff(m, m)),
        ("echo '{\"schema\": ' ; exit 1", lambda m: attnopt.validate(m, m)),
        ("exit 0", lambda m: attnopt.check(m, "1GiB")),
        ("exit 0", lambda m: attnopt.rewrite(m)),  # exit 0 and nothing written
    ],
)
def test_every_failure_is_an_attnopt_error(sagan, tmp_path, monkeypatch, script, call):
    fake = tmp_path / "attnopt"
    fake.write_text("#!/bin/sh\n" + script + "\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ATTNOPT_BINARY", str(fake))
    with pytest.raises(attnopt.AttnoptError) as e:
        call(sagan)
    assert e.value.returncode != 0 and e.value.message.startswith("attnopt: ")


def test_model_proto_with_external_data_needs_its_path(sagan):
    onnx = pytest.importorskip("onnx")
    m = onnx.load(str(sagan))
    m.graph.initializer[0].data_location = onnx.TensorProto.EXTERNAL
    with pytest.raises(attnopt.AttnoptError, match="external data") as e:
        attnopt.inspect(m)
    assert e.value.returncode == 2
    with pytest.raises(TypeError):
        attnopt.inspect(42)


@pytest.mark.parametrize("call", [
    lambda m: attnopt.inspect(m, json=True),
    lambda m: attnopt.rewrite(m, output="x"),
    lambda m: attnopt.rewrite(m, json=True),
    lambda m: attnopt.validate(m, m, format="md"),
    lambda m: attnopt.diff(m, m, o="x"),
    lambda m: attnopt.check(m, "1GiB", json=True),
])
def test_reserved_keywords(sagan, call):
    with pytest.raises(TypeError):
        call(sagan)


def test_register_without_onnxruntime():
    if has("onnxruntime"):
        pytest.skip("onnxruntime is installed")
    with pytest.raises(ImportError, match="pip install onnxruntime"):
        attnopt.register()


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


def test_validation_defaults_to_this_pythons_onnxruntime(sagan):
    from attnopt._library import onnxruntime_library_path

    res = attnopt.rewrite(sagan, validate=True)
    rt = res.validation.runtime
    if not has("onnxruntime"):
        assert rt.name == "go" and "pip install onnxruntime" in rt.note
        return
    import onnxruntime as ort

    lib = Path(onnxruntime_library_path())
    assert lib.name == f"libonnxruntime.so.{ort.__version__}"
    assert lib.parent.parent == Path(ort.__file__).parent
    assert (rt.name, rt.version) == ("ort", ort.__version__)
    # The report names the libraries, not this machine's paths (docs/reports.md).
    for got, path in ((rt.library, lib), (rt.custom_ops, Path(attnopt.get_library_path()))):
        assert Path(got).name == path.name and not Path(got).is_absolute()
    assert res.validation.passed and res.validation.checks[0].outputs[0].max_abs < 1e-4
    v = attnopt.validate(sagan, res.output)
    assert v.runtime.name == "ort" and v.passed


def test_console_validate_finds_the_runtime_without_path_flags(sagan, tmp_path):
    """In a venv with onnxruntime and the attnopt wheel, `attnopt validate A B
    --runtime ort` needs no path flag and no variable, from any folder."""
    if not has("onnxruntime"):
        pytest.skip("onnxruntime is not installed")
    out = attnopt.rewrite(sagan, tmp_path / "fused.onnx").output
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "ATTNOPT_RUNTIME")}
    p = subprocess.run([attnopt.binary_path(), "validate", str(sagan), out, "--runtime", "ort"], capture_output=True,
                       text=True, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    first = p.stdout.splitlines()[0]
    prefix = sys.prefix
    assert first.startswith("runtime: ONNX Runtime ") and f"({prefix})" in first, first
    assert os.path.join("onnxruntime", "capi", "libonnxruntime.so") in first and attnopt.get_library_path() in first, first
