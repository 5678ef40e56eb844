"""Keyword arguments to attnopt command-line flags."""

from __future__ import annotations

import os
from typing import List, Mapping, Sequence, Union

Scalar = Union[str, int, float, "os.PathLike[str]"]
Dims = Sequence[int]
FlagValue = Union[None, bool, Scalar, Dims, Sequence[Scalar], Mapping[str, Union[Scalar, Dims]]]
"""What a flag keyword takes; see :func:`to_args`."""


def _is_dims(v: object) -> bool:
    return (isinstance(v, (list, tuple)) and len(v) > 0
            and all(isinstance(d, int) and not isinstance(d, bool) for d in v))


def _text(v: object) -> str:
    if isinstance(v, (list, tuple)) and _is_dims(v):
        return "x".join(str(d) for d in v)
    if isinstance(v, os.PathLike):
        return str(os.fspath(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (str, int)) and not isinstance(v, bool):
        return str(v)
    raise TypeError(f"unsupported flag value {v!r} ({type(v).__name__})")


def to_args(flags: Mapping[str, FlagValue]) -> List[str]:
    """Turn keyword arguments into CLI flags, in the order given.

    ``name_with_underscores`` becomes ``--name-with-underscores``, and the value:

    - True: the bare flag (``explain=True`` -> ``--explain``); False or None: nothing;
    - a str, int, float or path: one value (``memory_budget="16GiB"``, ``max_error=0.01``);
    - a sequence of ints: a dims value (``window=(8, 8, 8)`` -> ``--window 8x8x8``);
    - a mapping: the flag once per item as KEY=VALUE (``dim={"batch": 1}`` ->
      ``--dim batch=1``; ``shape={"x": (1, 3, 224, 224)}`` -> ``--shape x=1x3x224x224``);
    - any other sequence: the flag once per element (``shape=["x=1x3x8x8"]``).

    The binary checks names and values: an unknown flag raises AttnoptError
    with exit code 2.
    """
    args: List[str] = []
    for name, value in flags.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                args += [flag, f"{k}={_text(v)}"]
        elif isinstance(value, (list, tuple)) and not _is_dims(value):
            for v in value:
                args += [flag, _text(v)]
        else:
            args += [flag, _text(value)]
    return args
