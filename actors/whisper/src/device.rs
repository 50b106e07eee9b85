//! Which processor runs the network, as the operator names it (`--device cpu|vulkan|wgpu|cuda`,
//! with an index where it applies): this CPU through the hand-written kernels, or any device burn
//! reaches. GPU backends are cargo features (`wgpu`, `cuda`) of this crate, so the default build
//! is the CPU path alone; naming a device the build lacks is an error that says how to get it.
//!
//! burn's wgpu backend compiles its kernels to WGSL (translated for the graphics API by wgpu),
//! not to SPIR-V directly: Mesa's lavapipe, the Vulkan device the tests run on, crashes building
//! burn's SPIR-V matrix-product kernels (Mesa 22.3 and 25.0 alike), and WGSL runs everywhere
//! wgpu does.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::Placement;

/// A device by name: `cpu`, `flex`, `vulkan[:N]`, `wgpu[:N]`, `cuda[:N]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceChoice {
    /// This CPU with the hand-written kernels: the fast CPU path.
    #[default]
    Cpu,
    /// burn's own CPU backend without the kernels: every operation through burn's tensor API,
    /// as on a GPU (slower; for checking the GPU path's numerics on any machine).
    Flex,
    /// A Vulkan device through burn's wgpu backend: `None` is the one wgpu prefers (a
    /// high-power GPU first; Mesa's lavapipe where there is no GPU), `Some(n)` the `n`-th
    /// discrete GPU.
    Vulkan(Option<usize>),
    /// A device of burn's wgpu backend on the graphics API wgpu picks (Metal on macOS, Vulkan or
    /// DirectX 12 elsewhere), chosen as for [`DeviceChoice::Vulkan`].
    Wgpu(Option<usize>),
    /// The `n`-th CUDA GPU.
    Cuda(usize),
}

impl DeviceChoice {
    /// Whether this is a GPU (which runs in float16 or float32; int8 is the CPU's).
    pub fn is_gpu(self) -> bool {
        matches!(self, DeviceChoice::Vulkan(_) | DeviceChoice::Wgpu(_) | DeviceChoice::Cuda(_))
    }

    /// The device names this build can run, for capabilities and error messages.
    pub fn available() -> Vec<&'static str> {
        let mut names = vec!["cpu", "flex"];
        if cfg!(feature = "wgpu") {
            names.push("vulkan");
        }
        if cfg!(feature = "cuda") {
            names.push("cuda");
        }
        names
    }

    /// The placement of the network's tensors, or why this build cannot run on the device.
    pub fn placement(self) -> Result<Placement, String> {
        match self {
            DeviceChoice::Cpu => Ok(Placement::Cpu),
            DeviceChoice::Flex => Ok(Placement::Device(burn::tensor::Device::flex())),
            #[cfg(feature = "wgpu")]
            DeviceChoice::Vulkan(index) => wgpu_device(self, index, burn::tensor::wgpu::WgpuBackend::Vulkan),
            #[cfg(feature = "wgpu")]
            DeviceChoice::Wgpu(index) => wgpu_device(self, index, burn::tensor::wgpu::WgpuBackend::Auto),
            #[cfg(feature = "cuda")]
            DeviceChoice::Cuda(index) => Ok(Placement::Device(burn::tensor::Device::cuda(index))),
            #[allow(unreachable_patterns)] // every device is reachable in a build with all features
            other => Err(format!(
                "this build of Scribe cannot run on {other}: build it with `--features {}` (this build has: {})",
                other.feature(),
                DeviceChoice::available().join(", ")
            )),
        }
    }

    fn feature(self) -> &'static str {
        match self {
            DeviceChoice::Cuda(_) => "cuda",
            _ => "wgpu",
        }
    }
}

/// The wgpu device of `choice`, opened once per process (the runtime refuses a second
/// initialisation) and shared by every model loaded on it; a device that cannot be opened (no
/// adapter of that kind, no such API) is an error naming it.
#[cfg(feature = "wgpu")]
fn wgpu_device(
    choice: DeviceChoice,
    index: Option<usize>,
    api: burn::tensor::wgpu::WgpuBackend,
) -> Result<Placement, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};

    use burn::tensor::{Device, DeviceKind};

    static OPENED: OnceLock<Mutex<HashMap<DeviceChoice, Device>>> = OnceLock::new();
    let mut opened = OPENED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(device) = opened.get(&choice) {
        return Ok(Placement::Device(device.clone()));
    }
    let kind = index.map_or(DeviceKind::DefaultDevice, DeviceKind::DiscreteGpu);
    let device = Device::wgpu_options()
        .device_kind(kind)
        .graphics_api(api)
        .init()
        .map_err(|e| format!("cannot open the {choice} device: {e}"))?;
    opened.insert(choice, device.clone());
    Ok(Placement::Device(device))
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Flex => f.write_str("flex"),
            DeviceChoice::Vulkan(None) => f.write_str("vulkan"),
            DeviceChoice::Vulkan(Some(n)) => write!(f, "vulkan:{n}"),
            DeviceChoice::Wgpu(None) => f.write_str("wgpu"),
            DeviceChoice::Wgpu(Some(n)) => write!(f, "wgpu:{n}"),
            DeviceChoice::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

/// A device name that is not one of `cpu`, `flex`, `vulkan[:N]`, `wgpu[:N]`, `cuda[:N]`.
#[derive(Debug, thiserror::Error)]
#[error("unknown device {0:?}: expected cpu, flex, vulkan, vulkan:N, wgpu, wgpu:N, cuda or cuda:N")]
pub struct UnknownDevice(pub String);

impl FromStr for DeviceChoice {
    type Err = UnknownDevice;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownDevice(s.to_string());
        let (name, index) = match s.split_once(':') {
            Some((name, n)) => (name, Some(n.parse::<usize>().map_err(|_| unknown())?)),
            None => (s, None),
        };
        match (name, index) {
            ("cpu", None) => Ok(DeviceChoice::Cpu),
            ("flex", None) => Ok(DeviceChoice::Flex),
            ("vulkan", index) => Ok(DeviceChoice::Vulkan(index)),
            ("wgpu", index) => Ok(DeviceChoice::Wgpu(index)),
            ("cuda", index) => Ok(DeviceChoice::Cuda(index.unwrap_or(0))),
            _ => Err(unknown()),
        }
    }
}

impl Serialize for DeviceChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DeviceChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_read_back_as_written() {
        for name in ["cpu", "flex", "vulkan", "vulkan:1", "wgpu", "wgpu:0", "cuda:0", "cuda:2"] {
            assert_eq!(name.parse::<DeviceChoice>().unwrap().to_string(), name);
        }
        assert_eq!("cuda".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cuda(0));
        for bad in ["gpu", "vulkan:", "cuda:x", "cpu:0", ""] {
            assert!(bad.parse::<DeviceChoice>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn a_device_the_build_lacks_is_refused_with_the_feature_to_build() {
        if !cfg!(feature = "cuda") {
            let err = DeviceChoice::Cuda(0).placement().unwrap_err();
            assert!(err.contains("--features cuda"), "{err}");
        }
        assert!(DeviceChoice::Cpu.placement().is_ok());
    }
}
