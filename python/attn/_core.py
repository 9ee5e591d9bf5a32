"""The attn Python API over the C API (see docs/python.md)."""

import ctypes
import errno
import json
import os
import threading

import numpy as np

from . import _capi
from ._capi import lib, take_error, take_string, encode, decode

__all__ = [
    "CompileError",
    "RunError",
    "Kernel",
    "compile",
    "report",
    "check",
    "compare",
    "random_inputs",
    "version",
]


class CompileError(ValueError):
    """The attn compiler rejected the spec (or compiling it failed). The
    message is the C library's, starting with ``file:line:col: error:`` when
    it is about the spec."""


class RunError(RuntimeError):
    """attnKernelRun or attnKernelReference returned a non-zero status.
    ``status`` is the ATTN_STATUS_* code. The Python checks run first, so
    this means the library refused what Python accepted."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class OutOfMemoryError(RunError, MemoryError):
    """A RunError with status ATTN_STATUS_OUT_OF_MEMORY: the call would need
    more memory than the machine has (or ``max_memory`` allows), or the
    compiled code could not allocate its workspace. Also a MemoryError."""


# --------------------------------------------------------------------------
# Options


_TARGETS = ("cpu", "nvptx")


class _Options:
    """An owned AttnOptions handle."""

    def __init__(self):
        self.handle = lib.attnOptionsCreate()
        if not self.handle:
            raise MemoryError("attnOptionsCreate returned NULL")

    def set(self, key, value):
        err = ctypes.c_void_p()
        if lib.attnOptionsSet(self.handle, encode(key), encode(value), ctypes.byref(err)):
            raise ValueError(
                take_error(err, "attnOptionsSet(%r, %r) failed" % (key, value))
            )
        take_error(err, None)

    def set_size(self, name, value):
        err = ctypes.c_void_p()
        if lib.attnOptionsSetSize(self.handle, encode(name), value, ctypes.byref(err)):
            raise ValueError(
                take_error(err, "attnOptionsSetSize(%r, %r) failed" % (name, value))
            )
        take_error(err, None)

    def close(self):
        if self.handle:
            lib.attnOptionsDestroy(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _str_option(name, value):
    if not isinstance(value, str):
        raise TypeError("%s must be a str, got %s" % (name, type(value).__name__))
    return value


def _int_option(name, value):
    if not _is_int(value):
        raise TypeError("%s must be an int, got %s" % (name, type(value).__name__))
    return int(value)


def _apply_sizes(opts, sizes):
    if sizes is None:
        return
    if not hasattr(sizes, "items"):
        raise TypeError(
            "sizes must be a dict of dim name -> int, got %s" % type(sizes).__name__
        )
    for name, value in sizes.items():
        if not isinstance(name, str):
            raise TypeError("sizes: dim names must be str, got %r" % (name,))
        if not _is_int(value):
            raise TypeError(
                "sizes: %s must be an int, got %s" % (name, type(value).__name__)
            )
        value = int(value)
        if not -(2**63) <= value < 2**63:
            raise ValueError("sizes: %s = %d does not fit in 64 bits" % (name, value))
        opts.set_size(name, value)


# --------------------------------------------------------------------------
# Specs


def _spec_source(spec):
    """(text, path): exactly one is not None. A str with a newline is spec
    text; any other str or os.PathLike is a path."""
    if isinstance(spec, str) and "\n" in spec:
        return spec, None
    if isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        return None, path
    raise TypeError(
        "spec must be a path (str or os.PathLike) or spec text (a str with a "
        "newline), got %s" % type(spec).__name__
    )


def _path_arg(path):
    return os.fsencode(path)


# --------------------------------------------------------------------------
# Arrays


def _as_array(obj, label):
    """OBJ as a numpy array without copying: a numpy array as is, an object
    with __dlpack__ through numpy.from_dlpack, one with __array_interface__
    through numpy.asarray. Anything else is a TypeError."""
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except Exception as e:  # e.g. a GPU tensor, a tensor needing grad
            hint = ""
            if "bfloat16" in str(getattr(obj, "dtype", "")):
                # numpy has no bfloat16, so DLPack cannot hand one over.
                hint = (
                    " (numpy has no bfloat16: pass its bits as uint16, for a "
                    "torch tensor t.view(torch.int16).numpy().view(numpy.uint16), "
                    "or use attn.torch)"
                )
            raise TypeError(
                "%s cannot be read through __dlpack__ as a host array: %s%s"
                % (label, e, hint)
            ) from e
    if hasattr(obj, "__array_interface__"):
        try:
            arr = np.asarray(obj)
        except Exception as e:
            raise TypeError(
                "%s has an unusable __array_interface__: %s" % (label, e)
            ) from e
        if not isinstance(arr, np.ndarray) or arr.dtype == object:
            raise TypeError("%s has an unusable __array_interface__" % label)
        return arr
    raise TypeError(
        "%s must be an array (a numpy array or an object with __dlpack__ or "
        "__array_interface__), got %s" % (label, type(obj).__name__)
    )


def _dtype_text(dtype):
    if not dtype.isnative:  # the name alone would read like the native type
        return "%s (byte-swapped %s)" % (dtype.str, dtype.name)
    return dtype.name


# Element types, as the C API names them (attnKernelInputType /
# attnKernelOutputType). An f16 or bf16 array holds 16-bit patterns: numpy's
# float16 for f16; for bf16, which numpy lacks, an array of a dtype named
# "bfloat16" (ml_dtypes', which JAX uses); and for either, uint16 bit
# patterns, so that nothing beyond numpy is needed.
_ELEMENT_TYPES = ("f32", "f16", "bf16")

# What a wrong dtype's message asks for.
_EXPECTED = {
    "f32": "float32",
    "f16": "float16 (numpy.float16, or uint16 bit patterns)",
    "bf16": "bfloat16 (ml_dtypes.bfloat16, or uint16 bit patterns)",
}


def _is_bfloat16(dtype):
    # Recognised by name, so that ml_dtypes need not be imported (or even
    # installed) to take its arrays.
    return dtype.name == "bfloat16" and dtype.itemsize == 2 and dtype.isnative


def _holds(dtype, etype):
    """Whether an array of DTYPE can be passed as ETYPE elements (native
    byte order only: the library reads the bits as they lie)."""
    if etype == "f32":
        return dtype == np.float32
    if dtype == np.uint16:
        return True
    if etype == "f16":
        return dtype == np.float16
    return _is_bfloat16(dtype)


_bfloat16 = None  # ml_dtypes.bfloat16's dtype, False without ml_dtypes


def _bfloat16_dtype():
    """ml_dtypes.bfloat16 as a numpy dtype, or None when ml_dtypes is not
    importable. Tried once, on first use: the package never needs it."""
    global _bfloat16
    if _bfloat16 is None:
        try:
            import ml_dtypes

            _bfloat16 = np.dtype(ml_dtypes.bfloat16)
        except Exception:  # not installed, or built for another numpy
            _bfloat16 = False
    return _bfloat16 or None


def _dtype_for(etype):
    """The dtype of the arrays the package makes for ETYPE: float32,
    float16, and ml_dtypes.bfloat16 or else uint16 bit patterns."""
    if etype == "f16":
        return np.dtype(np.float16)
    if etype == "bf16":
        return _bfloat16_dtype() or np.dtype(np.uint16)
    return np.dtype(np.float32)


def _widened(arr, etype):
    """ARR, holding ETYPE elements, as float32 (a copy unless f32): every
    f16 and bf16 value is exactly a float32."""
    if etype == "f32":
        return arr
    bits = arr.view(np.uint16)
    if etype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return bits.view(np.float16).astype(np.float32)


def _narrowed(arr, etype):
    """The float32 array ARR rounded to nearest even to ETYPE, of the dtype
    _dtype_for(ETYPE) gives."""
    if etype == "f16":
        return arr.astype(np.float16)
    if etype != "bf16":
        return arr
    b = arr.view(np.uint32)
    bits = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    # A NaN stays a NaN (rounding could carry it into the infinity).
    nan = np.isnan(arr)
    if nan.any():
        bits[nan] = (b[nan] >> 16).astype(np.uint16) | 0x0040
    return bits.view(_dtype_for("bf16"))


def _check_array(arr, label, rank, etype="f32"):
    if not _holds(arr.dtype, etype):
        raise TypeError(
            "%s must be %s, got %s" % (label, _EXPECTED[etype], _dtype_text(arr.dtype))
        )
    if arr.ndim != rank:
        raise ValueError(
            "%s must have rank %d, got an array of rank %d with shape %s"
            % (label, rank, arr.ndim, _shape_text(arr.shape))
        )
    if not arr.flags.c_contiguous:
        raise ValueError(
            "%s must be C-contiguous (dense row-major); got strides %s for shape %s "
            "(pass numpy.ascontiguousarray(...) to copy it)"
            % (label, tuple(arr.strides), _shape_text(arr.shape))
        )
    if not arr.flags.aligned:
        raise ValueError(
            "%s is not aligned to %s"
            % (label, "float32" if etype == "f32" else "its 2-byte elements")
        )


def _shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_dims(arr, label, dims, names, bound, bound_by):
    """Checks ARR's shape against DIMS ((fixed, dynamic index) per
    dimension), binding the dynamic sizes into BOUND / BOUND_BY."""
    expected = _shape_text(
        fixed if dyn is None else names[dyn] for fixed, dyn in dims
    )
    for d, (fixed, dyn) in enumerate(dims):
        got = int(arr.shape[d])
        if dyn is None:
            if got != fixed:
                raise ValueError(
                    "%s has size %d in dimension %d but the kernel expects %d "
                    "(shape %s)" % (label, got, d, fixed, expected)
                )
            continue
        name = names[dyn]
        if got < 1:
            raise ValueError(
                "%s has size %d in dimension %d (%s): sizes must be positive"
                % (label, got, d, name)
            )
        if bound[dyn] is None:
            bound[dyn] = got
            bound_by[dyn] = label
        elif bound[dyn] != got:
            raise ValueError(
                "%s has size %d in dimension %d but %s = %d (bound by %s; shape %s)"
                % (label, got, d, name, bound[dyn], bound_by[dyn], expected)
            )


def _pointer(arr):
    return arr.__array_interface__["data"][0]


# --------------------------------------------------------------------------
# Kernels


class Kernel:
    """A compiled attention kernel (an AttnKernel handle).

    Attributes: ``name``, ``inputs`` (names in declaration order), ``sizes``
    (names of the dynamic sizes), ``input_shapes`` (name -> tuple of ints
    and dynamic size names), ``output_shape``, ``input_types`` (name ->
    "f32", "f16" or "bf16"), ``output_type``, ``from_cache``,
    ``tolerance``. Call it with the inputs to run it; ``reference()`` runs
    the reference evaluator on the same arguments.
    """

    def __init__(self, handle, spec_text=None, spec_path=None):
        # Kept on the instance so that __del__ still works at interpreter
        # shutdown, when module globals may already be gone.
        self._destroy = lib.attnKernelDestroy
        self._handle = handle
        self._lock = threading.Lock()
        self._spec_text = spec_text
        self._spec_path = spec_path
        try:
            self._describe()
        except BaseException:
            self.close()
            raise

    def _describe(self):
        h = self._handle
        self.name = decode(lib.attnKernelName(h))
        self.from_cache = bool(lib.attnKernelFromCache(h))
        self.tolerance = float(lib.attnKernelTolerance(h))
        self.sizes = [
            decode(lib.attnKernelSizeName(h, i)) for i in range(lib.attnKernelNumSizes(h))
        ]
        self.inputs = []
        self._dims = []
        self._types = []
        for i in range(lib.attnKernelNumInputs(h)):
            self.inputs.append(decode(lib.attnKernelInputName(h, i)))
            self._types.append(self._element_type(lib.attnKernelInputType, (h, i)))
            self._dims.append(
                [
                    self._dim(lib.attnKernelInputDim, (h, i, d))
                    for d in range(lib.attnKernelInputRank(h, i))
                ]
            )
        self._out_dims = [
            self._dim(lib.attnKernelOutputDim, (h, d))
            for d in range(lib.attnKernelOutputRank(h))
        ]
        self._index = {n: i for i, n in enumerate(self.inputs)}
        self.input_shapes = {
            n: self._symbolic(dims) for n, dims in zip(self.inputs, self._dims)
        }
        self.output_shape = self._symbolic(self._out_dims)
        self.input_types = dict(zip(self.inputs, self._types))
        self.output_type = self._element_type(lib.attnKernelOutputType, (h,))

    def _element_type(self, fn, args):
        etype = decode(fn(*args))
        if etype not in _ELEMENT_TYPES:
            raise RuntimeError(
                "%s%s returned %r for kernel '%s'" % (fn.__name__, args[1:], etype, self.name)
            )
        return etype

    def _dim(self, fn, args):
        index = ctypes.c_int64(-1)
        value = fn(*args, ctypes.byref(index))
        if value >= 1:
            return (int(value), None)
        if value == -1 and 0 <= index.value < len(self.sizes):
            return (None, int(index.value))
        raise RuntimeError(
            "%s%s returned %d (dynamic index %d) for kernel '%s'"
            % (fn.__name__, args[1:], value, index.value, self.name)
        )

    def _symbolic(self, dims):
        return tuple(fixed if dyn is None else self.sizes[dyn] for fixed, dyn in dims)

    # ---- lifetime

    def close(self):
        """Frees the kernel; calling it again does nothing."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._destroy(handle)

    @property
    def closed(self):
        return not self._handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        # Element types only where they are not f32.
        return "<attn.Kernel %s(%s)%s sizes=(%s)%s%s>" % (
            self.name,
            ", ".join(
                n if t == "f32" else "%s: %s" % (n, t) for n, t in zip(self.inputs, self._types)
            ),
            "" if self.output_type == "f32" else " -> " + self.output_type,
            ", ".join(self.sizes),
            " from_cache" if self.from_cache else "",
            " closed" if self.closed else "",
        )

    # ---- running

    def _lengths(self):
        """The inputs this kernel's spec names as lengths (cached)."""
        if not hasattr(self, "_length_names"):
            self._length_names = _length_inputs(self._spec())
        return self._length_names

    def _bind(self, arrays, named, out):
        """Checks the arguments; returns (keep-alive arrays, output array,
        c_void_p array, c_int64 array)."""
        n = len(self.inputs)
        if len(arrays) > n:
            raise TypeError(
                "%s() takes %d input%s (%s) but %d were given"
                % (self.name, n, "" if n == 1 else "s", ", ".join(self.inputs), len(arrays))
            )
        given = dict(zip(self.inputs, arrays))
        for key, value in named.items():
            if key not in self._index:
                raise TypeError(
                    "%s() got an unexpected keyword argument '%s'; its inputs are %s"
                    % (self.name, key, ", ".join(self.inputs))
                )
            if key in given:
                raise TypeError(
                    "%s() got input '%s' twice (positionally and by name)"
                    % (self.name, key)
                )
            given[key] = value
        missing = [name for name in self.inputs if name not in given]
        if missing:
            raise TypeError(
                "%s() missing input%s %s"
                % (
                    self.name,
                    "" if len(missing) == 1 else "s",
                    ", ".join("'%s'" % m for m in missing),
                )
            )

        bound = [None] * len(self.sizes)
        bound_by = [None] * len(self.sizes)
        keep = []
        lengths = self._lengths()
        for name, dims, etype in zip(self.inputs, self._dims, self._types):
            label = "input '%s'" % name
            arr = _as_array(given[name], label)
            if name in lengths:
                arr = _as_lengths(arr, label)
            _check_array(arr, label, len(dims), etype)
            _check_dims(arr, label, dims, self.sizes, bound, bound_by)
            keep.append(arr)

        for i, value in enumerate(bound):
            if value is None:
                if any(dyn == i for _, dyn in self._out_dims):
                    raise ValueError(
                        "size %s of the output is not bound by any input" % self.sizes[i]
                    )
                # A dim no shape uses has no effect; bind it to 1.
                bound[i] = 1
        out_shape = tuple(fixed if dyn is None else bound[dyn] for fixed, dyn in self._out_dims)

        if out is None:
            out_arr = np.empty(out_shape, dtype=_dtype_for(self.output_type))
        else:
            out_arr = _as_array(out, "out")
            _check_array(out_arr, "out", len(out_shape), self.output_type)
            if tuple(out_arr.shape) != out_shape:
                raise ValueError(
                    "out has shape %s but the output is %s"
                    % (_shape_text(out_arr.shape), _shape_text(out_shape))
                )
            # numpy marks DLPack imports read-only (DLPack < 1.0 has no flag
            # for it), so only a numpy array's own flag is trusted.
            from_dlpack = not isinstance(out, np.ndarray) and hasattr(out, "__dlpack__")
            if not out_arr.flags.writeable and not from_dlpack:
                raise ValueError("out must be writeable")
            for name, arr in zip(self.inputs, keep):
                if np.may_share_memory(out_arr, arr):
                    raise ValueError("out must not overlap input '%s'" % name)

        pointers = (ctypes.c_void_p * (n + 1))(
            *[_pointer(a) for a in keep], _pointer(out_arr)
        )
        sizes = (ctypes.c_int64 * max(1, len(bound)))(*bound)
        return keep, out_arr, pointers, sizes

    def _invoke(self, fn, what, arrays, named, out):
        if self.closed:
            raise ValueError("kernel '%s' is closed" % self.name)
        keep, out_arr, pointers, sizes = self._bind(arrays, named, out)
        err = ctypes.c_void_p()
        with self._lock:
            if self.closed:
                raise ValueError("kernel '%s' is closed" % self.name)
            status = fn(self._handle, pointers, sizes, ctypes.byref(err))
        message = take_error(err, None)
        if status != 0:
            error = OutOfMemoryError if status == _capi.STATUS_OUT_OF_MEMORY else RunError
            raise error(
                message
                or "%s of '%s' returned %s" % (what, self.name, _capi.STATUS_NAMES.get(status, status)),
                status,
            )
        del keep
        return out if out is not None else out_arr

    def __call__(self, *arrays, out=None, **named):
        """Runs the kernel. Inputs positionally (declaration order) or by
        name; returns the output [B, H, N, E] (OUT itself if given): float32,
        or for an f16 / bf16 output float16 / ml_dtypes.bfloat16 (uint16
        bit patterns without ml_dtypes)."""
        return self._invoke(lib.attnKernelRun, "attnKernelRun", arrays, named, out)

    def reference(self, *arrays, out=None, **named):
        """The reference evaluator (double accumulation) on the same
        arguments as a call."""
        return self._invoke(
            lib.attnKernelReference, "attnKernelReference", arrays, named, out
        )

    def output_shape_for(self, *arrays, **named):
        """The output shape the inputs give (they are checked as by a call
        but nothing is run)."""
        _, out_arr, _, _ = self._bind(arrays, named, None)
        return out_arr.shape

    # ---- the spec

    def _spec(self):
        if self._spec_text is None and self._spec_path is not None:
            try:
                with open(self._spec_path, encoding="utf-8", errors="replace") as f:
                    self._spec_text = f.read()
            except OSError:
                self._spec_text = ""
        return self._spec_text or ""


def compile(
    spec,
    *,
    sizes=None,
    target="cpu",
    chip=None,
    cpu=None,
    cpu_features=None,
    force_order=None,
    threads=None,
    emulate_gpu=False,
    gpu_precision=None,
    cache_dir=None,
    max_memory=None,
    finite_inputs=False,
):
    """Compiles SPEC (a path to a .attn file, or spec text: a str with a
    newline) to a Kernel. See docs/python.md."""
    text, path = _spec_source(spec)
    with _Options() as opts:
        if isinstance(target, os.PathLike):  # a target description file
            target = os.fsdecode(os.fspath(target))
        opts.set("target", _str_option("target", target))
        if chip is not None:
            opts.set("chip", _str_option("chip", chip))
        if cpu is not None:
            opts.set("cpu", _str_option("cpu", cpu))
        if cpu_features is not None:
            opts.set("cpu-features", _str_option("cpu_features", cpu_features))
        if force_order is not None:
            opts.set("force-order", _str_option("force_order", force_order))
        if threads is not None:
            opts.set("threads", str(_int_option("threads", threads)))
        if finite_inputs:
            opts.set("finite-inputs", "1")
        if max_memory is not None:
            if isinstance(max_memory, str):
                opts.set("max-memory", max_memory)
            else:
                opts.set("max-memory", str(_int_option("max_memory", max_memory)))
        if emulate_gpu:
            opts.set("emulate-gpu", "1")
        if gpu_precision is not None:
            opts.set("gpu-precision", _str_option("gpu_precision", gpu_precision))
        if cache_dir is False:
            opts.set("cache-dir", "off")
        elif cache_dir is not None:
            if cache_dir is True or not isinstance(cache_dir, (str, bytes, os.PathLike)):
                raise TypeError(
                    "cache_dir must be None, False or a path, got %r" % (cache_dir,)
                )
            opts.set("cache-dir", os.fsdecode(os.fspath(cache_dir)))
        _apply_sizes(opts, sizes)

        err = ctypes.c_void_p()
        if text is not None:
            handle = lib.attnCompile(encode(text), None, opts.handle, ctypes.byref(err))
        else:
            handle = lib.attnCompileFile(_path_arg(path), opts.handle, ctypes.byref(err))
        if not handle:
            raise CompileError(take_error(err, "attnCompile failed without a message"))
        take_error(err, None)
    return Kernel(handle, spec_text=text, spec_path=path)


def report(spec, *, sizes=None, target="cpu", heads=None, head_dim=None):
    """The cost model's report (``attnc report SPEC --json``) as a dict."""
    text, path = _spec_source(spec)
    with _Options() as opts:
        if isinstance(target, os.PathLike):  # a target description file
            target = os.fsdecode(os.fspath(target))
        opts.set("target", _str_option("target", target))
        if heads is not None:
            opts.set("heads", str(_int_option("heads", heads)))
        if head_dim is not None:
            opts.set("head-dim", str(_int_option("head_dim", head_dim)))
        _apply_sizes(opts, sizes)
        err = ctypes.c_void_p()
        if text is not None:
            raw = lib.attnReport(encode(text), None, opts.handle, ctypes.byref(err))
        else:
            raw = lib.attnReportFile(_path_arg(path), opts.handle, ctypes.byref(err))
        if not raw:
            raise CompileError(take_error(err, "attnReport failed without a message"))
        take_error(err, None)
    return json.loads(take_string(raw))


def _element_type_of(arr, label, element_type):
    """The element type ARR holds by its dtype; ELEMENT_TYPE says which
    16-bit patterns a uint16 array holds."""
    if arr.dtype == np.float32:
        return "f32"
    if arr.dtype == np.float16:
        return "f16"
    if _is_bfloat16(arr.dtype):
        return "bf16"
    if arr.dtype == np.uint16:
        if element_type in ("f16", "bf16"):
            return element_type
        raise TypeError(
            "%s holds uint16: pass element_type='bf16' or 'f16' to say which "
            "16-bit patterns it holds" % label
        )
    raise TypeError(
        "%s must be float32, float16 or bfloat16 (ml_dtypes.bfloat16, or uint16 "
        "bit patterns with element_type=...), got %s" % (label, _dtype_text(arr.dtype))
    )


def compare(out, expected, tolerance, *, element_type=None):
    """attnCompare: {ok, max_abs_error, max_rel_error, tolerance} for two
    arrays of the same shape (OK: OUT and EXPECTED finite and
    max|out - expected| / max|expected| <= TOLERANCE). Each is float32,
    float16 or bfloat16 (ml_dtypes), widened to float32 first; uint16 arrays
    are bit patterns of ELEMENT_TYPE ("f16" or "bf16")."""
    if element_type not in (None,) + _ELEMENT_TYPES:
        raise ValueError(
            "element_type must be None, 'f32', 'f16' or 'bf16', got %r" % (element_type,)
        )
    a = _as_array(out, "out")
    b = _as_array(expected, "expected")
    widened = []
    for arr, label in ((a, "out"), (b, "expected")):
        etype = _element_type_of(arr, label, element_type)
        _check_array(arr, label, arr.ndim, etype)
        widened.append(_widened(arr, etype))
    if a.shape != b.shape:
        raise ValueError(
            "out has shape %s but expected has shape %s"
            % (_shape_text(a.shape), _shape_text(b.shape))
        )
    a, b = widened
    abs_err = ctypes.c_double()
    rel_err = ctypes.c_double()
    ok = lib.attnCompare(
        _pointer(a), _pointer(b), a.size, float(tolerance),
        ctypes.byref(abs_err), ctypes.byref(rel_err),
    )
    return {
        "ok": bool(ok),
        "max_abs_error": abs_err.value,
        "max_rel_error": rel_err.value,
        "tolerance": float(tolerance),
    }


# --------------------------------------------------------------------------
# Generated inputs


def _roles(spec_text):
    """(omega inputs, projection inputs, decay inputs, key weight inputs)
    named in the spec text."""
    import re

    text = re.sub(r"#[^\n]*", "", spec_text)
    omegas = set(re.findall(r"\bomega\s*=\s*([A-Za-z_]\w*)", text))
    projections = set()
    for e, f in re.findall(r"\bproject\s*=\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)", text):
        projections.update((e, f))
    decays = set(re.findall(r"\bdecay\s*=\s*([A-Za-z_]\w*)", text))
    key_weights = set(re.findall(r"\bkey_weight\s*=\s*([A-Za-z_]\w*)", text))
    # z0 of `state = S0, z0`: positive, like key weights (scaled below).
    norm_states = set(re.findall(r"\bstate\s*=\s*[A-Za-z_]\w*\s*,\s*([A-Za-z_]\w*)", text))
    return omegas, projections, decays, key_weights, norm_states


def _length_inputs(spec_text):
    """The inputs named as lengths (``lengths``, ``key_lengths``,
    ``query_lengths``) in the spec text."""
    import re

    text = re.sub(r"#[^\n]*", "", spec_text)
    return set(re.findall(r"\b(?:key_|query_)?lengths\s*=\s*([A-Za-z_]\w*)", text))


def _as_lengths(arr, label):
    """A lengths input (DESIGN §1.3, [B]) as float32 holding whole numbers
    >= 0: integer arrays are converted (a copy), float32 ones checked."""
    if arr.dtype.kind in "iu":
        if arr.size and (arr.min() < 0 or arr.max() > 2**24):
            raise ValueError(
                "%s holds lengths, which must lie in [0, 2^24], got %d"
                % (label, arr.min() if arr.min() < 0 else arr.max())
            )
        return np.ascontiguousarray(arr, dtype=np.float32)
    if arr.dtype == np.float32:
        bad = ~((arr >= 0) & (np.floor(arr) == arr))
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                "%s holds lengths, which must be whole numbers >= 0, got %r at %s"
                % (label, float(arr[where]), list(where))
            )
    return arr


def _orthogonal_gaussian(rng, m, d):
    """[m, d] rows orthogonal within each block of d, with chi(d) norms."""
    blocks = []
    for _ in range(0, m, d):
        g = rng.standard_normal((d, d))
        q, r = np.linalg.qr(g.T)
        rows = (q * np.where(np.diag(r) < 0, -1.0, 1.0)).T
        norms = np.linalg.norm(rng.standard_normal((d, d)), axis=1)
        blocks.append(rows * norms[:, None])
    return np.concatenate(blocks)[:m]


def random_inputs(kernel, sizes=None, seed=0):
    """Inputs for KERNEL as a dict name -> array, from
    numpy.random.default_rng(SEED), drawn in declaration order: standard
    normal; Linformer projections (``project = E, F``) times 1/sqrt(k), k
    their number of rows; FAVOR+ ``omega`` [m, D] as orthogonal Gaussian
    rows (blocks of D rows orthonormalised, scaled by chi(D) norms); a
    ``decay`` [H] as RetNet's 1 - 2^(-5-h), a ``decay`` [B, H, N] uniform in
    [0.9, 1), a ``key_weight`` uniform in [0, 1) and lengths as whole
    numbers in [0, L] (L the longest sequence; batch 1 full, batch 2
    empty). Drawn in float32; an f16 or bf16 input is then rounded to
    nearest even, as float16 or ml_dtypes.bfloat16 (uint16 bit patterns
    without ml_dtypes). SIZES binds the kernel's dynamic sizes (all of
    them)."""
    sizes = dict(sizes or {})
    unknown = [s for s in sizes if s not in kernel.sizes]
    if unknown:
        raise ValueError(
            "sizes: %s %s not a dynamic size of kernel '%s' (dynamic: %s)"
            % (
                ", ".join(unknown),
                "is" if len(unknown) == 1 else "are",
                kernel.name,
                ", ".join(kernel.sizes) or "none",
            )
        )
    for name in kernel.sizes:
        if name not in sizes:
            raise ValueError(
                "size %s of kernel '%s' is dynamic: give it in sizes={...}"
                % (name, kernel.name)
            )
        if not _is_int(sizes[name]) or sizes[name] < 1:
            raise ValueError("sizes: %s must be a positive int, got %r" % (name, sizes[name]))
    omegas, projections, decays, key_weights, norm_states = _roles(kernel._spec())
    lengths = kernel._lengths()
    rng = np.random.default_rng(seed)
    result = {}
    shapes = {
        name: tuple(s if isinstance(s, int) else int(sizes[s]) for s in kernel.input_shapes[name])
        for name in kernel.inputs
    }
    # Lengths go up to the longest sequence (the rows of the rank-4 inputs).
    longest = max([shape[2] for shape in shapes.values() if len(shape) == 4] or [1])
    for name in kernel.inputs:
        shape = shapes[name]
        if name in lengths and len(shape) == 1:
            # Batch 1 full, batch 2 empty, the others anywhere in [0, L].
            arr = rng.integers(0, longest + 1, shape)
            if shape[0] > 1:
                arr[1] = longest
            if shape[0] > 2:
                arr[2] = 0
        elif name in omegas and len(shape) == 2:
            arr = _orthogonal_gaussian(rng, shape[0], shape[1])
        elif name in projections and len(shape) == 2:
            arr = rng.standard_normal(shape) / np.sqrt(shape[0])
        elif name in decays and len(shape) == 1:
            arr = 1.0 - 2.0 ** (-5.0 - np.arange(shape[0]))
        elif name in decays:
            arr = rng.uniform(0.9, 1.0, shape)
        elif name in key_weights:
            arr = rng.uniform(0.0, 1.0, shape)
        elif name in norm_states:
            arr = rng.uniform(0.0, 4.0, shape)
        else:
            arr = rng.standard_normal(shape)
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        result[name] = _narrowed(arr, kernel.input_types[name])
    return result


def check(kernel_or_spec, *arrays, sizes=None, seed=None, **named):
    """Runs the kernel and the reference evaluator on the same inputs and
    compares them with attnCompare (an f16 / bf16 output widened to
    float32); returns {ok, max_abs_error, max_rel_error, tolerance}.

    KERNEL_OR_SPEC: a Kernel, or a spec (compiled with the default options
    and SIZES bound at compile time, then closed). Without arrays the
    inputs come from random_inputs(kernel, sizes, seed) (seed 0 by
    default); for a Kernel, SIZES then binds its dynamic sizes."""
    if isinstance(kernel_or_spec, Kernel):
        kernel, owned, gen_sizes = kernel_or_spec, False, sizes
        if sizes is not None and (arrays or named):
            raise TypeError("check(kernel, ...): sizes only applies to generated inputs")
    else:
        kernel, owned, gen_sizes = compile(kernel_or_spec, sizes=sizes), True, None
    try:
        if not arrays and not named:
            named = random_inputs(kernel, gen_sizes, 0 if seed is None else seed)
        elif seed is not None:
            raise TypeError("check(): seed only applies to generated inputs")
        out = kernel(*arrays, **named)
        ref = kernel.reference(*arrays, **named)
        # Both of the output's type; narrow ones are compared widened.
        return compare(out, ref, kernel.tolerance, element_type=kernel.output_type)
    finally:
        if owned:
            kernel.close()


def version():
    """attnVersion(): "attn <version>" and the LLVM version it was built
    with."""
    return decode(lib.attnVersion())
