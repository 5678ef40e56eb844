"""The ONNX Runtime custom-op library the wheel carries (attnopt.FlashAttention
and attnopt.WindowAttention on the CPU execution provider, and on the CUDA one
when the wheel was built with CUDA: docs/gpu.md)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # onnxruntime stays optional at run time
    import onnxruntime

# kernels/CMakeLists.txt builds target attnopt_ort; python/CMakeLists.txt installs it here.
_NAMES = {"darwin": "libattnopt_ort.dylib", "win32": "attnopt_ort.dll"}
_LIBRARY = Path(__file__).resolve().parent / "lib" / _NAMES.get(sys.platform, "libattnopt_ort.so")


def get_library_path() -> str:
    """Absolute path of attnopt's ONNX Runtime custom-op library, for
    ``SessionOptions.register_custom_ops_library`` (as onnxruntime-extensions'
    ``get_library_path``).

    One file serves both execution providers: its CUDA kernels (in a wheel
    built with CUDA) link the CUDA runtime statically and open the driver
    only when a node runs on ``CUDAExecutionProvider``, so nothing needs
    preloading for it and it loads where no CUDA is installed. ONNX
    Runtime's own CUDA provider needs its libraries (cuBLAS, cuDNN, ...):
    with onnxruntime-gpu and the nvidia-* wheels, ``onnxruntime.preload_dlls()``
    loads them.

    Raises FileNotFoundError when the package was not installed from a built
    wheel (e.g. imported straight from the source tree).
    """
    if not _LIBRARY.is_file():
        raise FileNotFoundError(
            f"attnopt custom-op library not found at {_LIBRARY}; install the package with "
            "`pip install ./python` from a checkout, which builds it"
        )
    return str(_LIBRARY)


def register(session_options: Optional["onnxruntime.SessionOptions"] = None) -> "onnxruntime.SessionOptions":
    """Register attnopt's custom ops in ``session_options`` (a new
    ``onnxruntime.SessionOptions`` when None) and return it, so that
    ``onnxruntime.InferenceSession`` can run models that ``rewrite`` wrote
    with ``target="attnopt"``.

    Imports onnxruntime only here; raises ImportError naming the package when
    it is missing.
    """
    if session_options is None:
        try:
            import onnxruntime
        except ImportError as e:
            raise ImportError("attnopt.register needs onnxruntime: pip install onnxruntime") from e
        session_options = onnxruntime.SessionOptions()
    session_options.register_custom_ops_library(get_library_path())
    return session_options


def onnxruntime_library_path() -> Optional[str]:
    """The ONNX Runtime shared library of the onnxruntime package this Python
    would import (onnxruntime/capi/libonnxruntime.so.<version>), found
    without importing it; None when onnxruntime is not installed.
    ``rewrite(..., runtime="ort")`` hands it to the binary, so validation
    runs in the ONNX Runtime the model will be deployed with.
    """
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        libs = sorted((Path(root) / "capi").glob("libonnxruntime.so*"))
        if libs:
            return str(libs[-1])
    return None
