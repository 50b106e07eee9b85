//! The raw PCM encodings a live client may announce (Amberscript's fourteen), decoded to f32.
//!
//! A live session receives binary frames of interleaved-free mono samples in the encoding its
//! INIT named. Decoding is a pure function of the bytes; a frame that does not end on a sample
//! boundary keeps its tail for the next frame (see [`PcmDecoder`]), so a client that splits its
//! stream anywhere still gets every sample, and the session says so once in a warning.

use std::fmt;

/// One of the fourteen PCM encodings, named as the protocol spells them (`s16le`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    F32be,
    F32le,
    S16be,
    S16le,
    S24be,
    S24le,
    S32be,
    S32le,
    U16be,
    U16le,
    U24be,
    U24le,
    U32be,
    U32le,
}

impl Encoding {
    /// Every encoding, in the protocol's order.
    pub const ALL: [Encoding; 14] = [
        Encoding::F32be,
        Encoding::F32le,
        Encoding::S16be,
        Encoding::S16le,
        Encoding::S24be,
        Encoding::S24le,
        Encoding::S32be,
        Encoding::S32le,
        Encoding::U16be,
        Encoding::U16le,
        Encoding::U24be,
        Encoding::U24le,
        Encoding::U32be,
        Encoding::U32le,
    ];

    /// The name as the protocol spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::F32be => "f32be",
            Encoding::F32le => "f32le",
            Encoding::S16be => "s16be",
            Encoding::S16le => "s16le",
            Encoding::S24be => "s24be",
            Encoding::S24le => "s24le",
            Encoding::S32be => "s32be",
            Encoding::S32le => "s32le",
            Encoding::U16be => "u16be",
            Encoding::U16le => "u16le",
            Encoding::U24be => "u24be",
            Encoding::U24le => "u24le",
            Encoding::U32be => "u32be",
            Encoding::U32le => "u32le",
        }
    }

    /// The encoding named `name`, exactly as spelled.
    pub fn parse(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Bytes per sample.
    pub fn sample_bytes(self) -> usize {
        match self {
            Encoding::S16be | Encoding::S16le | Encoding::U16be | Encoding::U16le => 2,
            Encoding::S24be | Encoding::S24le | Encoding::U24be | Encoding::U24le => 3,
            _ => 4,
        }
    }

    fn big_endian(self) -> bool {
        self.name().ends_with("be")
    }

    /// One sample of exactly [`Encoding::sample_bytes`] bytes, scaled to [-1, 1).
    fn sample(self, b: &[u8]) -> f32 {
        // The bytes as an unsigned integer of the sample's width, most significant first.
        let raw: u32 = if self.big_endian() {
            b.iter().fold(0u32, |acc, &x| (acc << 8) | x as u32)
        } else {
            b.iter().rev().fold(0u32, |acc, &x| (acc << 8) | x as u32)
        };
        let bits = 8 * b.len() as u32;
        let full_scale = (1u64 << (bits - 1)) as f64;
        match self {
            Encoding::F32be | Encoding::F32le => f32::from_bits(raw),
            Encoding::U16be
            | Encoding::U16le
            | Encoding::U24be
            | Encoding::U24le
            | Encoding::U32be
            | Encoding::U32le => ((raw as f64 - full_scale) / full_scale) as f32,
            _ => {
                // Sign-extend the `bits`-wide two's complement value.
                let shift = 32 - bits;
                let signed = ((raw << shift) as i32 >> shift) as f64;
                (signed / full_scale) as f32
            }
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Turns a session's binary frames into samples, carrying a partial sample over to the next
/// frame.
#[derive(Debug, Clone)]
pub struct PcmDecoder {
    encoding: Encoding,
    carry: Vec<u8>,
}

/// The samples of one frame, and whether the frame ended inside a sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub samples: Vec<f32>,
    /// The frame was not a whole number of samples: its last bytes wait for the next frame.
    pub split_sample: bool,
}

impl PcmDecoder {
    pub fn new(encoding: Encoding) -> PcmDecoder {
        PcmDecoder { encoding, carry: Vec::new() }
    }

    /// The samples `frame` completes. Floats that are not finite (NaN, infinities) become 0.
    pub fn decode(&mut self, frame: &[u8]) -> Decoded {
        let width = self.encoding.sample_bytes();
        let split_sample = !(self.carry.len() + frame.len()).is_multiple_of(width);
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(frame);
        let whole = bytes.len() / width * width;
        let samples = bytes[..whole]
            .chunks_exact(width)
            .map(|b| {
                let s = self.encoding.sample(b);
                if s.is_finite() { s.clamp(-1.0, 1.0) } else { 0.0 }
            })
            .collect();
        self.carry = bytes[whole..].to_vec();
        Decoded { samples, split_sample }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes `x` in `e` (the inverse of decoding, for the tests).
    fn encode(e: Encoding, x: f64) -> Vec<u8> {
        let width = e.sample_bytes();
        let bits = 8 * width as u32;
        let full = (1u64 << (bits - 1)) as f64;
        let raw: u32 = match e {
            Encoding::F32be | Encoding::F32le => (x as f32).to_bits(),
            Encoding::U16be
            | Encoding::U16le
            | Encoding::U24be
            | Encoding::U24le
            | Encoding::U32be
            | Encoding::U32le => (x * full + full).round().min(2.0 * full - 1.0) as u64 as u32,
            _ => ((x * full).round().min(full - 1.0) as i64 as u32) & ((1u64 << bits) - 1) as u32,
        };
        let be = raw.to_be_bytes();
        let mut bytes = be[4 - width..].to_vec();
        if !e.big_endian() {
            bytes.reverse();
        }
        bytes
    }

    #[test]
    fn given_each_encoding_when_a_ramp_is_decoded_then_the_values_come_back() {
        let values = [0.0, 0.5, -0.5, 0.25, -1.0, 0.999];
        for e in Encoding::ALL {
            let frame: Vec<u8> = values.iter().flat_map(|&x| encode(e, x)).collect();
            let decoded = PcmDecoder::new(e).decode(&frame);
            assert!(!decoded.split_sample, "{e}");
            assert_eq!(decoded.samples.len(), values.len(), "{e}");
            let tolerance = if e.sample_bytes() == 2 { 1e-4 } else { 1e-6 };
            for (got, want) in decoded.samples.iter().zip(values) {
                assert!((*got as f64 - want).abs() < tolerance, "{e}: {got} != {want}");
            }
        }
    }

    #[test]
    fn given_known_bytes_when_decoded_then_endianness_and_sign_are_right() {
        assert_eq!(PcmDecoder::new(Encoding::S16le).decode(&[0x00, 0x40]).samples, vec![0.5]);
        assert_eq!(PcmDecoder::new(Encoding::S16be).decode(&[0x40, 0x00]).samples, vec![0.5]);
        assert_eq!(PcmDecoder::new(Encoding::S16le).decode(&[0x00, 0x80]).samples, vec![-1.0]);
        assert_eq!(PcmDecoder::new(Encoding::U16le).decode(&[0x00, 0x80]).samples, vec![0.0]);
        assert_eq!(PcmDecoder::new(Encoding::S24be).decode(&[0xc0, 0x00, 0x00]).samples, vec![-0.5]);
        assert_eq!(PcmDecoder::new(Encoding::U24le).decode(&[0, 0, 0]).samples, vec![-1.0]);
        assert_eq!(PcmDecoder::new(Encoding::F32le).decode(&0.25f32.to_le_bytes()).samples, vec![0.25]);
    }

    #[test]
    fn given_a_frame_split_inside_a_sample_when_the_next_arrives_then_no_sample_is_lost() {
        let bytes: Vec<u8> = [0.5, -0.25, 0.125].iter().flat_map(|&x| encode(Encoding::S24le, x)).collect();
        let mut d = PcmDecoder::new(Encoding::S24le);
        let first = d.decode(&bytes[..4]);
        assert!(first.split_sample);
        assert_eq!(first.samples, vec![0.5]);
        let rest = d.decode(&bytes[4..]);
        assert!(!rest.split_sample);
        assert_eq!(rest.samples, vec![-0.25, 0.125]);
    }

    #[test]
    fn given_float_garbage_when_decoded_then_it_is_silence_or_clipped() {
        let mut frame = f32::NAN.to_le_bytes().to_vec();
        frame.extend(f32::INFINITY.to_le_bytes());
        frame.extend(3.0f32.to_le_bytes());
        assert_eq!(PcmDecoder::new(Encoding::F32le).decode(&frame).samples, vec![0.0, 0.0, 1.0]);
    }

    #[test]
    fn every_name_parses_back() {
        for e in Encoding::ALL {
            assert_eq!(Encoding::parse(e.name()), Some(e));
        }
        assert_eq!(Encoding::parse("S16LE"), None);
        assert_eq!(Encoding::parse("mp3"), None);
    }
}
