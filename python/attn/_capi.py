"""ctypes declarations of the attn C API (include/attn-c/Attn.h) and the
loading of libattn_c.so.

Lookup order:

1. ``$ATTN_LIBRARY``, a path to ``libattn_c.so``; when set it is the only
   place tried, so that a wrong value is an error rather than a silent
   fallback to another build;
2. ``<package dir>/../../build/lib/libattn_c.so``: the repository's build
   tree, since the package lives at ``python/attn``;
3. ``ctypes.util.find_library("attn_c")``: an installed copy.

Every function that can fail takes a ``char **error`` whose message is
malloc'ed by the library: the pointers are declared ``c_void_p`` so that
``take_error`` can read the text and give it back with ``attnFreeString``.
"""

import ctypes
import ctypes.util
import os

from ctypes import (
    POINTER,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_void_p,
)

__all__ = ["lib", "library_path", "take_error", "take_string", "encode"]

# Status codes of attnKernelRun (Attn.h).
STATUS_OK = 0
STATUS_BAD_SIZE = 1
STATUS_NULL_POINTER = 2
STATUS_ERROR = 3
STATUS_OUT_OF_MEMORY = 4

STATUS_NAMES = {
    STATUS_OK: "ATTN_STATUS_OK",
    STATUS_BAD_SIZE: "ATTN_STATUS_BAD_SIZE",
    STATUS_NULL_POINTER: "ATTN_STATUS_NULL_POINTER",
    STATUS_ERROR: "ATTN_STATUS_ERROR",
    STATUS_OUT_OF_MEMORY: "ATTN_STATUS_OUT_OF_MEMORY",
}

_BUILD_HINT = "build attn first: bash scripts/build.sh"


def _build_tree_library():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(
        os.path.join(here, os.pardir, os.pardir, "build", "lib", "libattn_c.so")
    )


def _load():
    tried = []
    env = os.environ.get("ATTN_LIBRARY")
    if env:
        candidates = [("$ATTN_LIBRARY", env)]
    else:
        candidates = [("the build tree", _build_tree_library())]
        found = ctypes.util.find_library("attn_c")
        candidates.append(("find_library('attn_c')", found))
    for origin, path in candidates:
        if not path:
            tried.append("%s: not found" % origin)
            continue
        # find_library returns a bare soname (libattn_c.so.1) that dlopen
        # resolves; a path must exist.
        if os.sep in path and not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (origin, path))
            continue
        try:
            # ctypes' default RTLD_LOCAL is enough: the library makes the
            # GPU runtime's mgpu* functions visible to its JIT linker itself.
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s: %s (%s)" % (origin, path, e))
    raise ImportError(
        "attn: cannot load the attn C library libattn_c.so; tried "
        + "; ".join(tried)
        + ". "
        + _BUILD_HINT
        + ", or set ATTN_LIBRARY to the path of libattn_c.so"
    )


lib, library_path = _load()

_ERR = POINTER(c_void_p)
_ARRAYS = POINTER(c_void_p)
_SIZES = POINTER(c_int64)

# name: (restype, argtypes)
_SIGNATURES = {
    "attnOptionsCreate": (c_void_p, []),
    "attnOptionsDestroy": (None, [c_void_p]),
    "attnOptionsSet": (c_int, [c_void_p, c_char_p, c_char_p, _ERR]),
    "attnOptionsSetSize": (c_int, [c_void_p, c_char_p, c_int64, _ERR]),
    "attnCompile": (c_void_p, [c_char_p, c_char_p, c_void_p, _ERR]),
    "attnCompileFile": (c_void_p, [c_char_p, c_void_p, _ERR]),
    "attnKernelDestroy": (None, [c_void_p]),
    "attnKernelFromCache": (c_int, [c_void_p]),
    "attnKernelName": (c_char_p, [c_void_p]),
    "attnKernelNumInputs": (c_size_t, [c_void_p]),
    "attnKernelInputName": (c_char_p, [c_void_p, c_size_t]),
    "attnKernelInputRank": (c_size_t, [c_void_p, c_size_t]),
    "attnKernelInputDim": (c_int64, [c_void_p, c_size_t, c_size_t, _SIZES]),
    "attnKernelInputType": (c_char_p, [c_void_p, c_size_t]),
    "attnKernelOutputType": (c_char_p, [c_void_p]),
    "attnKernelOutputRank": (c_size_t, [c_void_p]),
    "attnKernelOutputDim": (c_int64, [c_void_p, c_size_t, _SIZES]),
    "attnKernelNumSizes": (c_size_t, [c_void_p]),
    "attnKernelSizeName": (c_char_p, [c_void_p, c_size_t]),
    "attnKernelRun": (c_int, [c_void_p, _ARRAYS, _SIZES, _ERR]),
    "attnKernelRunDevice": (c_int, [c_void_p, _ARRAYS, _SIZES, _ERR]),
    "attnKernelReference": (c_int, [c_void_p, _ARRAYS, _SIZES, _ERR]),
    "attnKernelTolerance": (c_double, [c_void_p]),
    "attnCompare": (
        c_int,
        [c_void_p, c_void_p, c_size_t, c_double, POINTER(c_double), POINTER(c_double)],
    ),
    "attnReport": (c_void_p, [c_char_p, c_char_p, c_void_p, _ERR]),
    "attnReportFile": (c_void_p, [c_char_p, c_void_p, _ERR]),
    "attnFreeString": (None, [c_void_p]),
    "attnVersion": (c_char_p, []),
}


def _declare():
    missing = []
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError(
            "attn: %s lacks %s (a library older than include/attn-c/Attn.h?); %s"
            % (library_path, ", ".join(missing), _BUILD_HINT)
        )


_declare()


def encode(text):
    """str -> bytes (UTF-8) for a ``const char *``."""
    return text.encode("utf-8")


def take_string(pointer):
    """Reads the malloc'ed C string at POINTER (an int or None), frees it
    with attnFreeString and returns it as str (None for NULL)."""
    if not pointer:
        return None
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib.attnFreeString(pointer)


def take_error(error, fallback):
    """The message of a ``char **error`` out-parameter (a c_void_p), freed;
    FALLBACK when the library set none."""
    message = take_string(error.value)
    error.value = None
    return message if message else fallback


def decode(raw):
    """A borrowed ``const char *`` (bytes or None) -> str."""
    return raw.decode("utf-8", "replace") if raw is not None else None
