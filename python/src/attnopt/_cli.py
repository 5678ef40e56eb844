"""Running the attnopt binary: arguments, models given as paths or
onnx.ModelProto, the environment it sees, and the one error type."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from ._binary import binary_path
from ._library import get_library_path, onnxruntime_library_path

PathLike = Union[str, "os.PathLike[str]"]
Model = Union[str, "os.PathLike[str]", Any]
"""A model argument: a path, or an ``onnx.ModelProto`` (anything with
``SerializeToString``), which is written to a temporary file for the run."""


class AttnoptError(RuntimeError):
    """A command failed: the attnopt binary exited non-zero, printed no
    result, or could not be run.

    ``returncode`` is the exit code (1: validation failed or a site is over
    budget; 2: bad usage or bad input; 3: ``validate`` found nothing to
    compare or could not run an op (NO CHECKS / CANNOT CHECK); 4: an
    approximate site was validated without a bound (APPROXIMATE, not a
    pass: give ``max_error=``); 127: the binary was not found), ``message`` what it printed on
    stderr (one line naming the file at fault), ``stdout`` what it printed
    before failing, ``command`` the argument list it ran with, and
    ``result`` the typed result of the run when the command printed one
    before failing (a validation that failed, a check over budget), else
    None. ``report`` is ``result.json`` (the parsed JSON document) or None.
    """

    def __init__(self, command: List[str], returncode: int, stdout: str, stderr: str,
                 result: Any = None) -> None:
        self.command = command
        self.returncode = returncode
        self.stdout = stdout
        self.message = stderr.strip() or f"attnopt exited with code {returncode}"
        self.result = result
        self.report: Optional[Dict[str, Any]] = getattr(result, "json", None)
        super().__init__(f"{self.message} (exit {returncode})")


def _env() -> Dict[str, str]:
    """The binary's environment: this Python's onnxruntime and the wheel's
    custom-op library, unless the caller's environment names others, so
    that ``--runtime auto``/``ort`` validate in the runtime this Python
    deploys with."""
    env = dict(os.environ)
    if not env.get("ORT_LIB") and not env.get("ONNXRUNTIME_LIB"):
        lib = onnxruntime_library_path()
        if lib:
            env["ORT_LIB"] = lib
    if not env.get("ATTNOPT_CUSTOM_OPS"):
        try:
            env["ATTNOPT_CUSTOM_OPS"] = get_library_path()
        except FileNotFoundError:
            pass
    return env


def run(args: List[str], env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    """Run ``attnopt ARGS`` (``env``: variables set over :func:`_env`'s);
    AttnoptError (exit 127) when there is no binary."""
    try:
        exe = binary_path()
    except FileNotFoundError as e:
        raise AttnoptError(["attnopt", *args], 127, "", f"attnopt: {e}") from e
    # --quiet: stderr is captured for the error message, so the progress
    # lines attnopt prints off a terminal during long work would only
    # clutter it.
    return subprocess.run([exe, "--quiet", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          encoding="utf-8", errors="replace", check=False, env={**_env(), **(env or {})})


def parse_json(p: subprocess.CompletedProcess) -> Optional[Dict[str, Any]]:
    """The JSON document a command printed, or None when it printed none
    (a usage error prints only stderr)."""
    if not p.stdout.strip():
        return None
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        raise AttnoptError(p.args, p.returncode or 2, p.stdout, p.stderr or f"attnopt: printed no JSON ({e})") from e
    if not isinstance(doc, dict):
        raise AttnoptError(p.args, p.returncode or 2, p.stdout, p.stderr or "attnopt: printed JSON that is not an object")
    return doc


def is_model_proto(m: Any) -> bool:
    return hasattr(m, "SerializeToString") and hasattr(m, "graph")


def _uses_external_data(m: Any) -> bool:
    """Whether a ModelProto keeps tensors in files beside it (data_location
    EXTERNAL), which a temporary copy would not find."""
    def tensors(g: Any) -> Iterator[Any]:
        yield from g.initializer
        for n in g.node:
            for a in n.attribute:
                if a.HasField("t"):
                    yield a.t
                if a.HasField("g"):
                    yield from tensors(a.g)
                for sub in a.graphs:
                    yield from tensors(sub)
    return any(t.data_location == 1 for t in tensors(m.graph))


IN_MEMORY = "<in-memory model>"


class Names:
    """What the user calls the files a run used: a ModelProto's temporary
    copy is ``<in-memory model>`` (``<in-memory model 2>`` for the second of
    two), the temporary rewrite of one ``<in-memory rewritten model>``.
    :meth:`process` puts those names in place of the temporary paths in
    what the binary printed, so no message or result names a file that is
    deleted when the call returns."""

    def __init__(self) -> None:
        self.names: Dict[str, str] = {}

    def add(self, path: str, name: str) -> None:
        self.names[path] = name

    def text(self, s: str) -> str:
        for path in sorted(self.names, key=len, reverse=True):  # a path never stands for a longer one's prefix
            s = s.replace(path, self.names[path])
        return s

    def process(self, p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess([self.text(a) for a in p.args], p.returncode, self.text(p.stdout),
                                           self.text(p.stderr))


@contextlib.contextmanager
def model_paths(*models: Model) -> Iterator[Tuple[List[str], Names]]:
    """Paths for the binary: a path as given, a ModelProto written to a
    temporary file (removed afterwards), and the names that stand for the
    temporary ones in what the user sees."""
    names = Names()
    protos = sum(1 for m in models if is_model_proto(m))
    with tempfile.TemporaryDirectory(prefix="attnopt-") as tmp:
        out: List[str] = []
        for i, m in enumerate(models):
            if is_model_proto(m):
                if _uses_external_data(m):
                    raise AttnoptError(["attnopt"], 2, "", "attnopt: the ModelProto keeps tensors in external data "
                                       "files, which only its path lets attnopt find; pass the model's path instead")
                p = os.path.join(tmp, f"model{i}.onnx")
                try:
                    data = m.SerializeToString()
                except ValueError as e:  # over protobuf's 2 GiB
                    raise AttnoptError(["attnopt"], 2, "", f"attnopt: the ModelProto cannot be serialized ({e}); "
                                       "save it with external data and pass its path") from e
                with open(p, "wb") as f:
                    f.write(data)
                out.append(p)
                names.add(p, IN_MEMORY if protos == 1 else f"<in-memory model {i + 1}>")
            elif isinstance(m, (str, os.PathLike)):
                out.append(os.fspath(m))
            else:
                raise TypeError(f"a model is a path or an onnx.ModelProto, not {type(m).__name__}")
        yield out, names


def scratch_dir() -> "tempfile.TemporaryDirectory[str]":
    return tempfile.TemporaryDirectory(prefix="attnopt-")
