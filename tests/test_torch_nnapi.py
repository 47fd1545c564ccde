"""PyTorch's NNAPI backend as a client of libneuralnetworks.so.

``torch.backends._nnapi.prepare.convert_model_to_nnapi`` serialises a traced
model into NNAPI calls that its C++ side makes through the library at run
time, from a Python process that already runs (the library joins that
interpreter).  Each case here converts a model the way PyTorch's own NNAPI
tests do (NCHW and NHWC inputs, quint8 with zero point 128, flexible
dimensions given as 0, several outputs) and compares the NNAPI module's
output with the eager module's.  Runs in a subprocess: the library and
torch stay out of the test process.  Skipped without torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPT = r'''
import ctypes, os, sys
ctypes.cdll.LoadLibrary(os.environ["LIBNEURALNETWORKS_PATH"])  # before torch dlopens it by name
import torch
from torch.backends._nnapi.prepare import convert_model_to_nnapi

torch.backends.quantized.engine = "qnnpack"
torch.manual_seed(29)


def qpt(t, scale, zero_point):
    return torch.quantize_per_tensor(torch.as_tensor(t), scale, zero_point, torch.quint8)


def nhwc(t):
    t = t.clone().contiguous(memory_format=torch.channels_last)
    t.nnapi_nhwc = True
    return t


def quantised(model, inp):
    model = torch.nn.Sequential(model).eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    model = torch.ao.quantization.prepare(model)
    model(inp)
    return torch.ao.quantization.convert(model)


def check(name, module, args, convert_args=None, units=0):
    """The NNAPI module against the eager one: float outputs within 1e-5,
    quantised ones within ``units`` quantisation steps."""
    module.eval()
    with torch.no_grad():
        traced = torch.jit.trace(module, args)
        nnapi = convert_model_to_nnapi(traced, convert_args or args)
        want, got = module(*args), nnapi(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        if w.is_quantized:
            assert g.q_scale() == w.q_scale() and g.q_zero_point() == w.q_zero_point(), name
            diff = (w.int_repr().int() - g.int_repr().int()).abs().max().item()
            assert diff <= units, f"{name}: {diff} units"
        else:
            torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5, msg=name)
    print("ok", name)


class Binary(torch.nn.Module):
    def forward(self, a, b):
        return a + b, a * b


class Cat(torch.nn.Module):
    def forward(self, a, b):
        return torch.cat([a, b], 1)


class Mean(torch.nn.Module):
    def forward(self, t):
        return torch.mean(t, dim=[2, 3])


prelu = torch.nn.PReLU(4)
with torch.no_grad():
    prelu.weight.copy_(torch.tensor([0.1, 0.2, 0.3, 0.4]))
image = torch.randn(2, 4, 10, 10)
check("prelu-nhwc", prelu, [nhwc(image)])
check("prelu-flexible", prelu, [image], convert_args=[nhwc(torch.zeros(2, 4, 0, 0))])
for kind in ("nchw", "nhwc"):
    inp = image if kind == "nchw" else nhwc(image)
    for name, conv in (("3x3", torch.nn.Conv2d(4, 8, 3)), ("3x3s2p1", torch.nn.Conv2d(4, 8, 3, 2, 1)),
                       ("depthwise", torch.nn.Conv2d(4, 4, 3, groups=4)), ("1x1", torch.nn.Conv2d(4, 6, 1))):
        check(f"conv-{name}-{kind}", conv, [inp])
        check(f"conv-{name}-{kind}-flexible", conv, [inp],
              convert_args=[torch.zeros(0, 4, 0, 0) if kind == "nchw" else nhwc(torch.zeros(0, 4, 0, 0))])
    q = qpt(image, 1.0 / 16, 128)
    model = quantised(torch.nn.Conv2d(4, 8, 3), image)
    check(f"conv-quant-{kind}", model, [q if kind == "nchw" else nhwc(q)], units=1)
check("transpose-conv", torch.nn.ConvTranspose2d(4, 3, 2), [image])
check("linear-flexible-batch", torch.nn.Linear(16, 8), [torch.randn(3, 16)], convert_args=[torch.zeros(0, 16)])
check("binary-two-outputs", Binary(), [torch.randn(2, 3), torch.randn(2, 3)])
check("cat-nhwc", Cat(), [nhwc(torch.randn(1, 2, 3, 3)), nhwc(torch.randn(1, 4, 3, 3))])
check("softmax-flexible", torch.nn.Softmax(dim=1), [torch.randn(3, 5)], convert_args=[torch.zeros(0, 0)])
check("mean-nhwc", Mean(), [nhwc(image)])
check("maxpool-quant", torch.nn.MaxPool2d(2), [qpt(image, 0.03, 128)])
check("avgpool-quant", torch.nn.AvgPool2d((3, 4), (1, 2)), [qpt(image, 0.03, 128)], units=1)
check("upsample-nhwc", torch.nn.UpsamplingNearest2d(scale_factor=2.0), [nhwc(image)])
qlinear = torch.ao.nn.quantized.Linear(32, 16)
qlinear.set_weight_bias(torch.quantize_per_tensor(torch.randn(16, 32), 0.125, 0, torch.qint8), torch.randn(16))
check("linear-quant", qlinear, [qpt(torch.randn(2, 32), 0.05, 130)], units=1)
print("all passed")
'''


def test_pytorch_nnapi_backend_runs_on_the_library(ndk_lib: Path) -> None:
    env = dict(os.environ, LIBNEURALNETWORKS_PATH=str(ndk_lib / "libneuralnetworks.so"))
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("ok ") == 30 and "all passed" in done.stdout
