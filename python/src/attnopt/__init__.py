"""attnopt from Python: the ``attnopt`` command, its custom-op library for
ONNX Runtime, and an API for every command::

    import attnopt, onnxruntime as ort
    result = attnopt.rewrite("model.onnx")           # writes model.attnopt.onnx
    so = attnopt.register(ort.SessionOptions())      # loads libattnopt_ort.so
    session = ort.InferenceSession(result.output, so)

:func:`inspect`, :func:`rewrite`, :func:`validate`, :func:`diff` and
:func:`check` take paths or ``onnx.ModelProto`` models, run the bundled Go
binary (the same program as the ``attnopt`` console command) and return
typed results; a failure raises :class:`AttnoptError` with the command's
message and exit code. onnxruntime is needed only by :func:`register`,
onnx only for ModelProto models.
"""

from importlib.metadata import PackageNotFoundError, version

from ._binary import binary_path
from ._cli import AttnoptError
from ._commands import check, diff, inspect, rewrite, validate
from ._library import get_library_path, register
from ._library_info import CudaDevice, LibraryInfo, library_info
from ._results import (Check, CheckResult, CheckSite, DiffResult, FusedOp, InspectResult, OutputMetrics, RewriteResult,
                       Runtime, Site, SiteReport, ValidateResult)

__all__ = [
    "AttnoptError",
    "Check",
    "CheckResult",
    "CheckSite",
    "CudaDevice",
    "DiffResult",
    "FusedOp",
    "InspectResult",
    "LibraryInfo",
    "OutputMetrics",
    "RewriteResult",
    "Runtime",
    "Site",
    "SiteReport",
    "ValidateResult",
    "binary_path",
    "check",
    "diff",
    "get_library_path",
    "inspect",
    "library_info",
    "register",
    "rewrite",
    "validate",
]
try:
    __version__ = version("attnopt")  # pyproject.toml's, once installed
except PackageNotFoundError:  # imported from the source tree
    __version__ = "0+unknown"
