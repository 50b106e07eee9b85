"""Oracle for tests/engine_segments.rs: faster-whisper's segments and their decoder statistics.

usage: segments_reference.py MODEL_DIR LANGUAGE FILE...

Runs faster-whisper (float32 on the CPU, the same CTranslate2 model folder as the engine) with
the engine's defaults: beam 5, word timestamps, voice detection, temperature fallback. Prints
one JSON line per file: {"file", "segments": [{"seek", "start", "end", "text", "tokens",
"temperature", "avg_logprob", "compression_ratio", "no_speech_prob"}]}.
"""
import json
import sys

from faster_whisper import WhisperModel

model_dir, language = sys.argv[1:3]
model = WhisperModel(model_dir, device="cpu", compute_type="float32", num_workers=1)
for path in sys.argv[3:]:
    segments, _ = model.transcribe(path, language=language, beam_size=5, word_timestamps=True, vad_filter=True)
    keys = ("seek", "start", "end", "text", "tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob")
    rows = [{k: getattr(s, k) for k in keys} for s in segments]
    print(json.dumps({"file": path, "segments": rows}), flush=True)
