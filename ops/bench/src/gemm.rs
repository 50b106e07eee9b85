//! `scribe-bench gemm`: the engine's hand-written matrix kernel ([`Matrix`], float16 weights,
//! AVX2) against the `gemm` crate (the GEMM burn-flex runs on, AVX-512 where the CPU has it;
//! the engine's [`Dense`]) on the products Whisper computes, to keep each where it is faster.
//!
//! A benchmark, not a test: it prints times and ratios and asserts nothing. Each row is one
//! product of a real model's shapes, run by both sides on the same inputs in the same process
//! and thread pool, the median of several repetitions; `gemm ÷ hand` above 1 means the
//! hand-written kernel is faster. The crate gets the same float16 weights widened to f32 (it
//! has no f16-weights × f32-input product). The engine runs the encoder's products (1500
//! frames) on the crate and the decoder's (a few beams) on the hand-written kernel; the last
//! column says which, so a reader sees each choice next to its measurement.
//!
//! A second table runs the encoder's products as the int8 compute type does ([`Int8Gemm`],
//! AVX-512 VNNI: int8 weights, each input row quantized on the fly) against the same
//! products in f32 on the crate, with the int8 result's error relative to the f32 one.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::bail;
use half::f16;
use scribe_kernels::int8_gemm::Int8Gemm;
use scribe_kernels::{Dense, Matrix};

#[derive(clap::Args, Debug)]
pub struct BenchGemmArgs {
    /// Repetitions of each product per side (the median is printed).
    #[arg(long, default_value_t = 7)]
    pub reps: usize,
}

/// One product `[m, inp] · [inp, out]`, named for the layer it stands for.
struct Shape {
    layer: &'static str,
    m: usize,
    inp: usize,
    out: usize,
}

const fn shape(layer: &'static str, m: usize, inp: usize, out: usize) -> Shape {
    Shape { layer, m, inp, out }
}

/// Whisper base (d_model 512, 8 heads of 64) and tiny (384, 6 heads): the encoder's linear
/// layers and the two attention products of one head over a 30 s window.
const ENCODER: [Shape; 10] = [
    shape("base enc qkv", 1500, 512, 1536),
    shape("base enc out", 1500, 512, 512),
    shape("base enc fc1", 1500, 512, 2048),
    shape("base enc fc2", 1500, 2048, 512),
    shape("tiny enc fc1", 1500, 384, 1536),
    shape("tiny enc fc2", 1500, 1536, 384),
    shape("head q·kᵀ", 1500, 64, 1504),
    shape("head p·v", 1500, 1500, 64),
    shape("base cross kv", 1500, 512, 1024),
    shape("tiny cross kv", 1500, 384, 768),
];

/// The decoder's layers for five beams (the default beam size) and for one (greedy).
const DECODER: [Shape; 8] = [
    shape("base dec self", 5, 512, 512),
    shape("base dec fc1", 5, 512, 2048),
    shape("base dec fc2", 5, 2048, 512),
    shape("base logits", 5, 512, 51865),
    shape("base logits 1", 1, 512, 51865),
    shape("tiny dec fc1", 5, 384, 1536),
    shape("tiny logits", 5, 384, 51864),
    shape("tiny logits 1", 1, 384, 51864),
];

pub fn run(args: BenchGemmArgs) -> anyhow::Result<()> {
    if args.reps == 0 {
        bail!("--reps must be positive");
    }
    println!("threads: {}", threads());
    println!(
        "{:<16} {:>18} {:>10} {:>10} {:>10}  engine uses",
        "product", "m×inp→out", "hand ms", "gemm ms", "gemm÷hand"
    );
    let (mut wrong, mut rows) = (0, 0);
    for (s, engine_uses_hand) in ENCODER.iter().map(|s| (s, false)).chain(DECODER.iter().map(|s| (s, true))) {
        let w16: Vec<f16> = values(s.out * s.inp, 1).into_iter().map(f16::from_f32).collect();
        let w32: Vec<f32> = w16.iter().map(|v| v.to_f32()).collect();
        let (x, bias) = (values(s.m * s.inp, 2), values(s.out, 3));
        let matrix = Matrix::f16(w16, s.out, s.inp, Some(bias.clone()));
        let dense = Dense::new(w32, s.out, s.inp, Some(bias));
        let hand = median(args.reps, || black_box(matrix.forward(&x, s.m)));
        let crate_ = median(args.reps, || black_box(dense.forward(&x, s.m, false)));
        let ratio = crate_.as_secs_f64() / hand.as_secs_f64();
        let dims = format!("{}×{}→{}", s.m, s.inp, s.out);
        let uses = if engine_uses_hand { "hand" } else { "gemm" };
        println!("{:<16} {:>18} {:>10.3} {:>10.3} {:>10.2}  {uses}", s.layer, dims, ms(hand), ms(crate_), ratio);
        rows += 1;
        if (ratio > 1.0) != engine_uses_hand {
            wrong += 1;
        }
    }
    println!("products where the engine uses the slower side on this machine: {wrong} of {rows}");
    int8_table(&args);
    Ok(())
}

/// The encoder's products in int8 against f32, or why they cannot run here.
fn int8_table(args: &BenchGemmArgs) {
    println!();
    if !Int8Gemm::available() {
        println!("int8 encoder products: not measured, this CPU has no AVX-512 VNNI (the engine keeps them in f32)");
        return;
    }
    println!(
        "{:<16} {:>18} {:>10} {:>10} {:>10} {:>10}",
        "product", "m×inp→out", "f32 ms", "int8 ms", "f32÷int8", "rel. error"
    );
    for s in ENCODER.iter().filter(|s| !s.layer.starts_with("head")) {
        let (w, x, bias) = (values(s.out * s.inp, 1), values(s.m * s.inp, 2), values(s.out, 3));
        let dense = Dense::new(w.clone(), s.out, s.inp, Some(bias.clone()));
        let int8 = Int8Gemm::quantize(&w, s.out, s.inp, Some(bias));
        let exact = dense.forward(&x, s.m, false);
        let got = int8.forward(&x, s.m);
        let error = exact.iter().zip(&got).map(|(a, b)| (a - b).abs()).sum::<f32>()
            / exact.iter().map(|a| a.abs()).sum::<f32>().max(f32::MIN_POSITIVE);
        let f32_time = median(args.reps, || black_box(dense.forward(&x, s.m, false)));
        let int8_time = median(args.reps, || black_box(int8.forward(&x, s.m)));
        let dims = format!("{}×{}→{}", s.m, s.inp, s.out);
        let ratio = f32_time.as_secs_f64() / int8_time.as_secs_f64();
        println!(
            "{:<16} {:>18} {:>10.3} {:>10.3} {:>10.2} {:>9.3}%",
            s.layer,
            dims,
            ms(f32_time),
            ms(int8_time),
            ratio,
            100.0 * error
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median wall time of `reps` runs of `f`, after one warm-up run.
fn median<T>(reps: usize, mut f: impl FnMut() -> T) -> Duration {
    drop(f());
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            drop(f());
            start.elapsed()
        })
        .collect();
    times.sort();
    times[reps / 2]
}

/// `n` values in [−1, 1) from a small deterministic generator (both sides see the same data).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
