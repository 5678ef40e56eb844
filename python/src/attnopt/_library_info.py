"""What the wheel's custom-op library can run here: :func:`library_info`,
the companion of :func:`attnopt.get_library_path`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ._cli import AttnoptError, parse_json, run
from ._library import get_library_path


@dataclass(frozen=True)
class CudaDevice:
    name: str
    sm: int  # compute capability, 90 for 9.0


@dataclass(frozen=True)
class LibraryInfo:
    """The custom-op library's kernels, this machine's CUDA driver and
    devices, and the ONNX Runtime providers of this Python's onnxruntime,
    as ``attnopt version --json`` reads them (its ``custom_ops``, ``cuda``
    and ``onnxruntime``; docs/reports.md)."""

    path: str
    cuda: str  # the CUDA toolkit the library was built with, "none" for a CPU-only build
    cuda_archs: List[str]  # machine code "sm_90" and PTX "compute_90"
    cpu_isas: List[str]  # CPU tile kernels built in: generic, avx2, avx512
    cpu_supported: List[str]  # those this processor runs
    cpu_selected: str  # the one in use
    cuda_driver: Optional[str]  # the driver's CUDA version; None without a driver
    cuda_devices: List[CudaDevice]
    cuda_error: Optional[str]  # why no device is visible
    providers: List[str]  # this Python's onnxruntime's execution providers; [] without onnxruntime
    on_cuda: str  # "yes: <devices>" or "no: <why>": would attnopt's ops run on the CUDA EP here
    json: Dict[str, Any] = field(repr=False)

    @property
    def runs_on_cuda(self) -> bool:
        return self.on_cuda.startswith("yes")

    def __str__(self) -> str:
        cuda = f"CUDA {self.cuda}: {', '.join(self.cuda_archs)}" if self.cuda != "none" else "no CUDA kernels"
        return (f"{self.path}: CPU {', '.join(self.cpu_isas)} (this CPU: {self.cpu_selected}); {cuda}; "
                f"attnopt ops on CUDA: {self.on_cuda}")


def library_info() -> LibraryInfo:
    """What :func:`get_library_path`'s library can run: its CPU kernels'
    instruction sets and CUDA architectures (read from the library), the
    CUDA driver and devices this machine has, this Python's ONNX Runtime
    providers, and whether attnopt's ops would run on
    ``CUDAExecutionProvider`` here (``on_cuda``, ``runs_on_cuda``).

    Raises FileNotFoundError when the package has no library, AttnoptError
    when the binary cannot read it.
    """
    path = get_library_path()
    p = run(["version", "--json"], env={"ATTNOPT_CUSTOM_OPS": path})
    doc = parse_json(p)
    if p.returncode != 0 or doc is None:
        raise AttnoptError(p.args, p.returncode or 2, p.stdout, p.stderr)
    lib = doc.get("custom_ops", {})
    content = lib.get("content")
    if content is None:
        raise AttnoptError(p.args, 2, p.stdout, f"attnopt: cannot read {path}: {lib.get('error', 'no content')}")
    cuda = doc.get("cuda", {})
    return LibraryInfo(
        path=path, cuda=content.get("cuda", "none"), cuda_archs=content.get("cuda_archs", []),
        cpu_isas=content.get("cpu_isas", []), cpu_supported=content.get("cpu_supported", []),
        cpu_selected=content.get("cpu_selected", ""), cuda_driver=cuda.get("driver"),
        cuda_devices=[CudaDevice(d["name"], d["sm"]) for d in cuda.get("devices", [])], cuda_error=cuda.get("error"),
        providers=doc.get("onnxruntime", {}).get("providers", []), on_cuda=doc.get("attnopt_ops_on_cuda", ""),
        json=doc)
