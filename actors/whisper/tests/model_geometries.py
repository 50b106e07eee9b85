"""Writes small random-weight CTranslate2 Whisper models and what CTranslate2 computes from them.

Used by model_geometries.rs: `python model_geometries.py OUT_DIR MODELS_DIR`. For each geometry
(mel bins, decoder layers, width, heads, vocabulary, file dtype) it builds a
`ctranslate2.specs.WhisperSpec` with seeded random weights, saves it with the spec's own
quantization (float32, float16, int8, int8_float16), copies a real tokenizer.json (tiny.en's for
the English-only vocabulary, base's for the multilingual one, base's with <|yue|> inserted at
50358 for large-v3's 51866 tokens), and runs `ctranslate2.models.Whisper` on one seeded mel
window, in float32 (int8 weights dequantized) and, for int8 files, in int8_float32 too: the
encoder output (`encode`) and a greedy decoding with the per-step logits
(`generate(beam_size=1, return_logits_vocab=True)`). Everything is written as raw
little-endian float32 plus one `reference.json` per model, for the Rust side to compare.
"""

import json
import os
import shutil
import sys

import ctranslate2
import numpy as np
from ctranslate2.specs import whisper_spec

# name, n_mels, encoder layers, decoder layers, d_model, heads, vocabulary, file dtype
GEOMETRIES = [
    ("en-f16-80mel-1dec", 80, 2, 1, 64, 4, "en", "float16"),
    ("multi-int8-80mel-2dec", 80, 1, 2, 128, 2, "multi", "int8"),
    ("v3-f16-128mel-4dec", 128, 1, 4, 64, 4, "v3", "float16"),
    ("v3-int8-128mel-3dec", 128, 2, 3, 128, 2, "v3", "int8"),
    ("en-f32-80mel-2dec", 80, 1, 2, 64, 2, "en", "float32"),
    ("multi-int8f16-128mel-2dec", 128, 1, 2, 64, 4, "multi", "int8_float16"),
]
N_AUDIO_CTX = 1500
N_TEXT_CTX = 448
GREEDY_STEPS = 10


def tokenizer_and_config(kind, models_dir):
    """The tokenizer.json and config.json of a real model, adapted to the vocabulary kind."""
    source = "whisper-tiny.en" if kind == "en" else "whisper-base"
    with open(os.path.join(models_dir, source, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    with open(os.path.join(models_dir, source, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    n_vocab = 51864 if kind == "en" else 51865
    if kind == "v3":
        # large-v3 adds <|yue|> after the 99 languages: every later special id moves by one.
        yue = 50358
        for t in tok["added_tokens"]:
            if t["id"] >= yue:
                t["id"] += 1
        entry = dict(tok["added_tokens"][0])
        entry.update(id=yue, content="<|yue|>")
        tok["added_tokens"].append(entry)
        tok["added_tokens"].sort(key=lambda t: t["id"])
        shift = lambda ids: [i + 1 if i >= yue else i for i in ids]  # noqa: E731
        config["suppress_ids"] = shift(config["suppress_ids"])
        config["suppress_ids_begin"] = shift(config["suppress_ids_begin"])
        config["lang_ids"] = sorted(shift(config["lang_ids"]) + [yue])
        post = tok.get("post_processor") or {}
        for special in (post.get("special_tokens") or {}).values():
            special["ids"] = shift(special["ids"])
        n_vocab = 51866
    names = {i: t for t, i in tok["model"]["vocab"].items()}
    names.update({t["id"]: t["content"] for t in tok["added_tokens"]})
    no_ts = next(t["id"] for t in tok["added_tokens"] if t["content"] == "<|notimestamps|>")
    vocabulary = [
        names.get(i, "<|%.2f|>" % ((i - no_ts - 1) * 0.02) if i > no_ts else "<|unused%d|>" % i)
        for i in range(n_vocab)
    ]
    return tok, config, vocabulary


def random_spec(rng, n_mels, enc_layers, dec_layers, d, heads, n_vocab):
    spec = whisper_spec.WhisperSpec(enc_layers, heads, dec_layers, heads)
    ffn = 4 * d

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def linear(lin, out, inp, bias=True):
        lin.weight = normal((out, inp), 1.0 / np.sqrt(inp))
        if bias:
            lin.bias = normal((out,), 0.05)

    def norm(ln):
        ln.gamma = (1.0 + normal((d,), 0.1)).astype(np.float32)
        ln.beta = normal((d,), 0.05)

    def layer(l, cross):
        norm(l.self_attention.layer_norm)
        linear(l.self_attention.linear[0], 3 * d, d)
        linear(l.self_attention.linear[1], d, d)
        if cross:
            norm(l.attention.layer_norm)
            linear(l.attention.linear[0], d, d)
            linear(l.attention.linear[1], 2 * d, d)
            linear(l.attention.linear[2], d, d)
        norm(l.ffn.layer_norm)
        linear(l.ffn.linear_0, ffn, d)
        linear(l.ffn.linear_1, d, ffn)

    enc = spec.encoder
    enc.conv1.weight = normal((d, n_mels, 3), 1.0 / np.sqrt(3 * n_mels))
    enc.conv1.bias = normal((d,), 0.05)
    enc.conv2.weight = normal((d, d, 3), 1.0 / np.sqrt(3 * d))
    enc.conv2.bias = normal((d,), 0.05)
    enc.position_encodings.encodings = normal((N_AUDIO_CTX, d), 0.3)
    norm(enc.layer_norm)
    for l in enc.layer:
        layer(l, cross=False)
    dec = spec.decoder
    embeddings = normal((n_vocab, d), 0.5)
    dec.embeddings.weight = embeddings
    dec.projection.weight = embeddings  # tied, as in every Whisper model (saved as an alias)
    dec.position_encodings.encodings = normal((N_TEXT_CTX, d), 1.0)
    norm(dec.layer_norm)
    for l in dec.layer:
        layer(l, cross=True)
    return spec


def main():
    out_dir, models_dir = sys.argv[1], sys.argv[2]
    mels = {}
    for n_mels in (80, 128):
        rng = np.random.default_rng(1000 + n_mels)
        # Whisper's features lie in about [-1, 1.5]; smooth them a little along time.
        x = rng.uniform(-1.0, 1.5, size=(n_mels, 3000)).astype(np.float32)
        x = (0.5 * x + 0.25 * np.roll(x, 1, axis=1) + 0.25 * np.roll(x, -1, axis=1)).astype(np.float32)
        mels[n_mels] = x
        x.tofile(os.path.join(out_dir, "mel%d.f32" % n_mels))
    for seed, (name, n_mels, enc_layers, dec_layers, d, heads, kind, dtype) in enumerate(GEOMETRIES):
        model_dir = os.path.join(out_dir, name)
        tok, config, vocabulary = tokenizer_and_config(kind, models_dir)
        spec = random_spec(np.random.default_rng(seed), n_mels, enc_layers, dec_layers, d, heads, len(vocabulary))
        spec.register_vocabulary(vocabulary)
        config["alignment_heads"] = [[dec_layers - 1, 0], [0, heads - 1]]
        for key, value in config.items():
            setattr(spec.config, key, value)
        spec.validate()
        spec.optimize(quantization=dtype)
        os.makedirs(model_dir, exist_ok=True)
        spec.save(model_dir)
        with open(os.path.join(model_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False)
        # Scribe reads tokenizer.json; vocabulary.json (the spec's own) stays next to it.
        with open(os.path.join(model_dir, "preprocessor_config.json"), "w") as f:
            json.dump({"feature_size": n_mels, "sampling_rate": 16000, "hop_length": 160, "n_fft": 400}, f)

        ids = {t["content"]: t["id"] for t in tok["added_tokens"]}
        prompt = [ids["<|startoftranscript|>"]]
        if kind != "en":
            prompt += [ids["<|fr|>"], ids["<|transcribe|>"]]
        prompt += [ids["<|notimestamps|>"]]

        features = ctranslate2.StorageView.from_array(mels[n_mels][None])
        # CTranslate2 on CPU runs a float16 file in float32 and an int8 file in int8_float32
        # (activations quantized per row too); float32 on an int8 file dequantizes the weights.
        runs = []
        for compute_type in ["float32"] + (["int8_float32"] if dtype.startswith("int8") else []):
            model = ctranslate2.models.Whisper(model_dir, device="cpu", compute_type=compute_type, inter_threads=1)
            encoded = np.array(model.encode(features, to_cpu=True), dtype=np.float32)
            encoded[0].tofile(os.path.join(model_dir, "encoder-%s.f32" % compute_type))
            result = model.generate(
                features,
                [prompt],
                beam_size=1,
                max_length=GREEDY_STEPS,
                return_scores=True,
                return_logits_vocab=True,
                suppress_blank=False,
                suppress_tokens=[],
            )[0]
            steps = [np.array(step, dtype=np.float32).reshape(-1) for step in result.logits[0]]
            np.array(steps, dtype=np.float32).tofile(os.path.join(model_dir, "logits-%s.f32" % compute_type))
            runs.append({"compute_type": compute_type, "tokens": result.sequences_ids[0], "logit_steps": len(steps)})
            del model
        with open(os.path.join(model_dir, "reference.json"), "w") as f:
            json.dump(
                {
                    "name": name,
                    "n_mels": n_mels,
                    "d_model": d,
                    "n_decoder_layers": dec_layers,
                    "n_encoder_layers": enc_layers,
                    "n_heads": heads,
                    "n_vocab": len(vocabulary),
                    "file_dtype": dtype,
                    "multilingual": kind != "en",
                    "prompt": prompt,
                    "runs": runs,
                },
                f,
            )


if __name__ == "__main__":
    main()
