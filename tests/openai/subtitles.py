"""Reads subtitles the OpenAI door answered with the independent parsers the export tests use:
SRT with the PyPI `srt` package, WebVTT with `webvtt-py`. Usage: subtitles.py srt|vtt FILE.
Prints the cues as a JSON array of {"start", "end", "text"} (seconds)."""
import json
import sys

mode, path = sys.argv[1], sys.argv[2]
if mode == "srt":
    import srt

    with open(path, encoding="utf-8") as f:
        cues = [
            {"start": c.start.total_seconds(), "end": c.end.total_seconds(), "text": c.content}
            for c in srt.parse(f.read(), ignore_errors=False)
        ]
elif mode == "vtt":
    import webvtt

    def seconds(clock):
        h, m, s = clock.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    cues = [{"start": seconds(c.start), "end": seconds(c.end), "text": c.text} for c in webvtt.read(path).captions]
else:
    sys.exit(f"unknown mode {mode}")
print(json.dumps(cues))
