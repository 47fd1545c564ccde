"""Build ``libneuralnetworks.so`` with cffi's embedding mode.

Why cffi embedding: it produces an ordinary C shared library whose exported
functions are Python (``ffi.def_extern``); on the first call it starts an
interpreter, or joins the one already running in the process (a Python
program that loads the library by ``dlopen`` keeps one nnc, not two).  The
declarations come from the NDK header itself (preprocessed by the system C
compiler), and the generated C is compiled against that header, so every
signature is the header's.  The init code puts the ``sys.path`` of the
building interpreter first, so a plain C program needs no environment.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

HEADER_DIR = Path(__file__).resolve().parent / "include"
LIBRARY = "libneuralnetworks.so"
MODULE = "_nnc_ndk"

#: Declared only for Android in the header, exported anyway: clients probe for it.
AHWB_DECL = """
typedef struct AHardwareBuffer AHardwareBuffer;
int ANeuralNetworksMemory_createFromAHardwareBuffer(const AHardwareBuffer* ahwb,
                                                    ANeuralNetworksMemory** memory);
"""


#: Loaded into a Python that already runs (a Python program that dlopens the
#: library: PyTorch's NNAPI backend), start the library's Python side while
#: loading.  Before Python 3.12, cffi's start-up spin lock is
#: PyCapsule_Type's version tag, which the running interpreter sets at the
#: first attribute lookup on the capsule type (pybind11 modules such as
#: PyTorch's do one): the first NNAPI call would then spin forever.
#: PyType_Modified resets the tag (it only invalidates the type's method
#: cache), and starting at once leaves no window for it to be set again.
JOIN_RUNNING_PYTHON = """
__attribute__((constructor)) static void nnc_ndk_join_running_python(void)
{
#if PY_VERSION_HEX < 0x030C0000
    if (!Py_IsInitialized())
        return;  /* a C program: Python starts at the first call */
    PyGILState_STATE state = PyGILState_Ensure();
    PyType_Modified(&PyCapsule_Type);
    PyGILState_Release(state);
    _cffi_start_python();
#endif
}
"""


class BuildError(Exception):
    """The library could not be built (no C compiler, compile error, ...)."""


def declarations(cc: str) -> str:
    """The header's declarations as cffi reads them: the NNAPI headers
    preprocessed without the system headers (cffi knows the standard types)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("NeuralNetworks.h", "NeuralNetworksTypes.h"):
            text = (HEADER_DIR / name).read_text()
            text = re.sub(r"^#include <[^>]*>$", "", text, flags=re.M)
            (Path(tmp) / name).write_text(text)
        try:
            proc = subprocess.run(
                [
                    cc,
                    "-E",
                    "-P",
                    "-DNN_COMPATIBILITY_LIBRARY_BUILD",
                    "-D__BEGIN_DECLS=",
                    "-D__END_DECLS=",
                    f"-I{tmp}",
                    "-x",
                    "c",
                    "-",
                ],
                input='#include "NeuralNetworks.h"\n',
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as e:
            raise BuildError(f"cannot run the C compiler {cc}: {e.strerror}") from None
    if proc.returncode != 0:
        raise BuildError(f"preprocessing NeuralNetworks.h failed:\n{proc.stderr}")
    return proc.stdout + AHWB_DECL


def init_code() -> str:
    """Python run once when the library is first used: the building
    interpreter's import path (nnc's own directory first, ``.pth`` files of
    its site directories processed) so that a plain C program finds nnc."""
    root = str(Path(__file__).resolve().parents[2])
    paths = [root] + [p for p in sys.path if p and p != root]
    sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
    return (
        "import site, sys\n"
        f"for _p in reversed({paths!r}):\n"
        "    if _p not in sys.path:\n"
        "        sys.path.insert(0, _p)\n"
        f"for _s in {sites!r}:\n"
        "    site.addsitedir(_s)\n"
        "if getattr(sys, 'argv', None) in (None, [], ['']):\n"
        f"    sys.executable = {sys.executable!r}\n"
        f"from {MODULE} import ffi\n"
        "from nnc.ndk.api import install\n"
        "install(ffi)\n"
    )


def _compile(ffi: Any, tmp: str, cc: str) -> str:
    """cffi compiles through setuptools, which takes the compiler from ``CC``."""
    saved = os.environ.get("CC")
    os.environ["CC"] = cc
    try:
        return ffi.compile(tmpdir=tmp, target=LIBRARY, verbose=False)
    finally:
        if saved is None:
            del os.environ["CC"]
        else:
            os.environ["CC"] = saved


def build(out_dir: str | os.PathLike, cc: str | None = None) -> Path:
    """Compile the library into ``out_dir``; returns its path."""
    import cffi

    cc = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BuildError("no C compiler found (set CC or install gcc)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ffi = cffi.FFI()
    ffi.embedding_api(declarations(cc))
    ffi.set_source(
        MODULE,
        '#include "NeuralNetworks.h"\n' + AHWB_DECL + JOIN_RUNNING_PYTHON,
        include_dirs=[str(HEADER_DIR)],
        define_macros=[("NN_COMPATIBILITY_LIBRARY_BUILD", None)],
        extra_link_args=[f"-Wl,-soname,{LIBRARY}", f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}"],
    )
    ffi.embedding_init_code(init_code())
    with tempfile.TemporaryDirectory() as tmp:
        try:
            built = _compile(ffi, tmp, cc)
        except Exception as e:  # cffi and setuptools raise many kinds
            raise BuildError(f"compiling {LIBRARY} failed: {e}") from e
        dest = out / LIBRARY
        shutil.copy(built, dest)
    for name in ("NeuralNetworks.h", "NeuralNetworksTypes.h"):
        shutil.copy(HEADER_DIR / name, out / name)
    return dest
