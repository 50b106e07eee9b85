// The Live page's AudioWorklet: it turns the microphone's Float32 samples (mixed down to mono)
// into the protocol's `s16le` at the AudioContext's own rate, in frames of `frameSamples`
// (about 100 ms), each posted to the page with the RMS of its samples for the level meter.
// A "flush" message posts what is left of the current frame, marked `last`.
"use strict";

class ScribePcmFrames extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.size = Math.max(1, options.processorOptions.frameSamples | 0);
    this.fresh();
    this.port.onmessage = (e) => {
      if (e.data === "flush") this.post(true);
    };
  }

  fresh() {
    this.frame = new DataView(new ArrayBuffer(this.size * 2));
    this.filled = 0;
    this.sumOfSquares = 0;
  }

  post(last) {
    const pcm = this.frame.buffer.slice(0, this.filled * 2);
    const rms = this.filled ? Math.sqrt(this.sumOfSquares / this.filled) : 0;
    this.port.postMessage({ pcm, rms, last }, [pcm]);
    this.fresh();
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const count = channels.length;
    const length = channels[0].length;
    for (let i = 0; i < length; i++) {
      let v = 0;
      for (let c = 0; c < count; c++) v += channels[c][i];
      v /= count;
      if (v > 1) v = 1;
      else if (v < -1) v = -1;
      this.sumOfSquares += v * v;
      // little-endian 16-bit, whatever the machine's byte order
      this.frame.setInt16(this.filled * 2, Math.round(v < 0 ? v * 32768 : v * 32767), true);
      this.filled += 1;
      if (this.filled === this.size) this.post(false);
    }
    return true;
  }
}

registerProcessor("scribe-pcm-frames", ScribePcmFrames);
