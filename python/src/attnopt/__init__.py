"""attnopt from Python: the ``attnopt`` command, its custom-op library for
ONNX Runtime, and a small API over both::

    import attnopt, onnxruntime as ort
    result = attnopt.rewrite("model.onnx")           # writes model.attnopt.onnx
    so = attnopt.register(ort.SessionOptions())      # loads libattnopt_ort.so
    session = ort.InferenceSession(result.output, so)

``inspect`` and ``rewrite`` run the bundled Go binary (the same program as the
``attnopt`` console command) and raise :class:`AttnoptError` with its message
and exit code when it fails. onnxruntime is needed only by :func:`register`.
"""

from importlib.metadata import PackageNotFoundError, version

from ._binary import binary_path
from ._cli import AttnoptError, RewriteResult, inspect, rewrite
from ._library import get_library_path, register

__all__ = [
    "AttnoptError",
    "RewriteResult",
    "binary_path",
    "get_library_path",
    "inspect",
    "register",
    "rewrite",
]
try:
    __version__ = version("attnopt")  # pyproject.toml's, once installed
except PackageNotFoundError:  # imported from the source tree
    __version__ = "0+unknown"
