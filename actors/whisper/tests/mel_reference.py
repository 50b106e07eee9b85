"""Oracle for tests/mel.rs: faster-whisper's log-mel of raw little-endian f32 samples.

usage: mel_reference.py SAMPLES.f32 N_MELS OUT.f32   (writes row-major [n_mels x n_frames] f32,
prints "n_mels n_frames")
"""
import sys

import numpy as np
from faster_whisper.feature_extractor import FeatureExtractor

samples = np.fromfile(sys.argv[1], dtype="<f4")
n_mels = int(sys.argv[2])
mel = FeatureExtractor(feature_size=n_mels)(samples)
np.ascontiguousarray(mel, dtype="<f4").tofile(sys.argv[3])
print(mel.shape[0], mel.shape[1])
