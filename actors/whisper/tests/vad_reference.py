"""Oracles for tests/vad.rs.

usage: vad_reference.py MODEL.safetensors SAMPLES.f32 PROBS_OUT.f32

1. Probabilities: a plain numpy transcription of Silero VAD v6's PyTorch module (STFT conv,
   magnitude, conv1..4 + ReLU with strides 1,2,2,1, LSTM cell, ReLU, 1x1 conv, sigmoid; 576-sample
   inputs = 64 context + 512 chunk, reflect-padded by 64 on the right; state carried), run on
   the same safetensors weights, in float64. Written to PROBS_OUT (one per 512-sample chunk,
   audio zero-padded as faster-whisper pads it).
   faster-whisper's and silero-vad's ONNX files hold other v6 weights than
   silero_vad_16k.safetensors (only the STFT basis is byte-identical), so they cannot be the
   probability oracle.
2. Spans: faster-whisper's get_speech_timestamps with default VadOptions (its own ONNX model),
   printed as "start end" lines: the behaviour to stay close to.
"""
import json
import struct
import sys

import numpy as np
from faster_whisper.vad import VadOptions, get_speech_timestamps

raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
W = {}
for name, meta in json.loads(raw[8 : 8 + n]).items():
    if name != "__metadata__":
        s, e = meta["data_offsets"]
        W[name] = np.frombuffer(raw[8 + n + s : 8 + n + e], dtype="<f4").reshape(meta["shape"]).astype(np.float64)


def conv1d(x, w, b, stride, pad):
    x = np.pad(x, ((0, 0), (pad, pad)))
    k = w.shape[2]
    steps = (x.shape[1] - k) // stride + 1
    out = np.stack([np.tensordot(w, x[:, t * stride : t * stride + k], axes=([1, 2], [0, 1])) for t in range(steps)], 1)
    return out if b is None else out + b[:, None]


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def probabilities(audio):
    chunks = np.pad(audio, (0, 512 - len(audio) % 512)).astype(np.float64).reshape(-1, 512)
    h, c, context, out = np.zeros(128), np.zeros(128), np.zeros(64), []
    for chunk in chunks:
        x = np.pad(np.concatenate([context, chunk]), (0, 64), mode="reflect")
        context = chunk[-64:]
        spec = conv1d(x[None, :], W["stft_conv.weight"], None, 128, 0)
        m = np.sqrt(spec[:129] ** 2 + spec[129:] ** 2)
        for i, stride in zip(range(1, 5), (1, 2, 2, 1)):
            m = np.maximum(conv1d(m, W[f"conv{i}.weight"], W[f"conv{i}.bias"], stride, 1), 0)
        g = W["lstm_cell.weight_ih"] @ m[:, 0] + W["lstm_cell.bias_ih"] + W["lstm_cell.weight_hh"] @ h + W["lstm_cell.bias_hh"]
        i, f, gg, o = np.split(g, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(gg)
        h = sigmoid(o) * np.tanh(c)
        out.append(sigmoid(W["final_conv.weight"][0, :, 0] @ np.maximum(h, 0) + W["final_conv.bias"][0]))
    return np.array(out, dtype="<f4")


audio = np.fromfile(sys.argv[2], dtype="<f4")
probabilities(audio).tofile(sys.argv[3])
for span in get_speech_timestamps(audio, VadOptions()):
    print(span["start"], span["end"])
