//! Reader for CTranslate2 `model.bin` files, the format the Whisper weights ship in.
//!
//! burn cannot read CTranslate2, so this module walks the binary layout itself (header, spec
//! name and revision, named variables with dtype and shape, aliases) and then checks that the
//! file really is a complete Whisper model: every variable the encoder and decoder need is
//! present with the shape the model's own dimensions imply. Any problem becomes a
//! [`Ct2Error`] naming the file and what is wrong, never a panic.
//!
//! Layout (little-endian): `u32 version`, then for version ≥ 2 `str spec, u32 revision`,
//! `u32 n_vars`, each `str name, u8 rank, u32 dims[rank], u8 dtype, u32 n_bytes, bytes`, then
//! for version ≥ 3 `u32 n_aliases` and `str alias, str target` pairs. `str` is a `u16`
//! length (including a trailing NUL) followed by the bytes.

use std::collections::BTreeMap;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A model file that cannot be used, with the reason in words a user can act on.
#[derive(Debug, thiserror::Error)]
#[error("model file {path}: {reason}")]
pub struct Ct2Error {
    pub path: PathBuf,
    pub reason: String,
}

/// Element type of a stored variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32,
    I8,
    I16,
    I32,
    F16,
    BF16,
}

impl DType {
    fn from_id(id: u8) -> Option<DType> {
        Some(match id {
            0 => DType::F32,
            1 => DType::I8,
            2 => DType::I16,
            3 => DType::I32,
            4 => DType::F16,
            5 => DType::BF16,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            DType::I8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
        }
    }
}

/// One named variable: its shape, element type and where its bytes are in the file.
#[derive(Clone, Debug)]
pub struct Variable {
    pub shape: Vec<usize>,
    pub dtype: DType,
    bytes: Range<usize>,
    /// The payload itself when it is small (scalars, flags), kept even by a header-only read.
    small: Option<Vec<u8>>,
}

/// Payloads up to this size are kept in [`Variable::small`] (scalar attributes).
const SMALL_PAYLOAD: usize = 64;

impl StoredWeight {
    /// The weights as f32, rows of `cols` (int8 rows dequantized).
    pub fn into_f32(self, cols: usize) -> Vec<f32> {
        match self {
            StoredWeight::F32(w) => w,
            StoredWeight::F16(w) => w.iter().map(|v| v.to_f32()).collect(),
            StoredWeight::I8 { q, row_scale } => q
                .chunks(cols.max(1))
                .zip(&row_scale)
                .flat_map(|(row, s)| row.iter().map(move |&x| x as f32 * s))
                .collect(),
        }
    }
}

/// A weight matrix as the file stores it, `rows × cols` row-major (a convolution's
/// `[out, in, width]` is `out × (in·width)`).
pub enum StoredWeight {
    F32(Vec<f32>),
    F16(Vec<half::f16>),
    /// CTranslate2 int8: row `r` is `q[r] · row_scale[r]` (`row_scale` = 1 / the file's scale).
    I8 {
        q: Vec<i8>,
        row_scale: Vec<f32>,
    },
}

/// A parsed `model.bin`, holding the file's bytes.
pub struct Ct2File {
    path: PathBuf,
    pub binary_version: u32,
    pub spec: String,
    pub revision: u32,
    /// The whole file, or empty after [`Ct2File::open_header`].
    data: Vec<u8>,
    /// Size of the file on disk.
    file_bytes: u64,
    header_only: bool,
    variables: BTreeMap<String, Variable>,
    aliases: BTreeMap<String, String>,
}

/// Reads the layout from any seekable source: the bytes in memory, or the file itself when
/// only the header is wanted (payloads are then skipped with a seek).
struct Reader<R: Read + Seek> {
    src: R,
    pos: usize,
    len: usize,
}

impl<R: Read + Seek> Reader<R> {
    /// Checks that `n` more bytes exist and returns their range, without reading them.
    fn span(&mut self, n: usize, what: &str) -> Result<Range<usize>, String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.len).ok_or_else(|| {
            format!(
                "file ends early (truncated?): needed {n} bytes for {what} at offset {}, only {} left",
                self.pos,
                self.len - self.pos
            )
        })?;
        let r = self.pos..end;
        self.pos = end;
        Ok(r)
    }
    fn bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>, String> {
        let r = self.span(n, what)?;
        let mut buf = vec![0u8; n];
        self.src.read_exact(&mut buf).map_err(|e| format!("cannot read {what} at offset {}: {e}", r.start))?;
        Ok(buf)
    }
    /// Passes over `n` bytes (a payload) and returns their range.
    fn skip(&mut self, n: usize, what: &str) -> Result<Range<usize>, String> {
        let r = self.span(n, what)?;
        self.src.seek(SeekFrom::Start(r.end as u64)).map_err(|e| format!("cannot seek over {what}: {e}"))?;
        Ok(r)
    }
    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.bytes(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.bytes(2, what)?.try_into().unwrap()))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes(4, what)?.try_into().unwrap()))
    }
    fn string(&mut self, what: &str) -> Result<String, String> {
        let n = self.u16(what)? as usize;
        if n == 0 {
            return Err(format!("invalid empty {what} at offset {}", self.pos - 2));
        }
        let start = self.pos;
        let bytes = self.bytes(n, what)?;
        if bytes[n - 1] != 0 {
            return Err(format!("{what} at offset {start} is not NUL-terminated"));
        }
        String::from_utf8(bytes[..n - 1].to_vec()).map_err(|_| format!("{what} at offset {start} is not UTF-8"))
    }
}

/// What the header describes.
struct Layout {
    binary_version: u32,
    spec: String,
    revision: u32,
    variables: BTreeMap<String, Variable>,
    aliases: BTreeMap<String, String>,
}

/// Upper bounds that keep a corrupt header from making us allocate absurd amounts.
const MAX_VARIABLES: u32 = 100_000;
const MAX_RANK: u8 = 8;

/// Parses the layout of a file of `len` bytes from `src`; every byte must be accounted for.
fn read_layout<R: Read + Seek>(path: &Path, src: R, len: usize) -> Result<Layout, Ct2Error> {
    let err = |reason: String| Ct2Error { path: path.to_path_buf(), reason };
    let mut r = Reader { src, pos: 0, len };
    let version = r.u32("binary version").map_err(&err)?;
    if !(1..=6).contains(&version) {
        return Err(err(format!("not a CTranslate2 model (binary version {version}, expected 1 to 6)")));
    }
    let (spec, revision) = if version >= 2 {
        let spec = r.string("spec name").map_err(&err)?;
        (spec, r.u32("spec revision").map_err(&err)?)
    } else {
        (String::new(), 1)
    };
    let n_vars = r.u32("variable count").map_err(&err)?;
    if n_vars > MAX_VARIABLES {
        return Err(err(format!("implausible variable count {n_vars}: not a CTranslate2 model")));
    }
    let mut variables = BTreeMap::new();
    for i in 0..n_vars {
        let name = r.string(&format!("name of variable {i}")).map_err(&err)?;
        let rank = r.u8("rank").map_err(&err)?;
        if rank > MAX_RANK {
            return Err(err(format!("variable {name} has implausible rank {rank}")));
        }
        let mut shape = Vec::with_capacity(rank as usize);
        for _ in 0..rank {
            shape.push(r.u32("dimension").map_err(&err)? as usize);
        }
        let (dtype, n_bytes) = if version >= 4 {
            let id = r.u8("dtype").map_err(&err)?;
            let dtype = DType::from_id(id).ok_or_else(|| err(format!("variable {name} has unknown dtype id {id}")))?;
            (dtype, r.u32("byte count").map_err(&err)? as usize)
        } else {
            let item = r.u8("item size").map_err(&err)?;
            let count = r.u32("element count").map_err(&err)? as usize;
            let dtype = match item {
                1 => DType::I8,
                2 => DType::I16,
                4 => DType::F32,
                _ => return Err(err(format!("variable {name} has unknown item size {item}"))),
            };
            (dtype, count * item as usize)
        };
        let elements: usize = shape.iter().product();
        if elements.checked_mul(dtype.size()) != Some(n_bytes) {
            return Err(err(format!(
                "variable {name}: shape {shape:?} of {dtype:?} needs {} bytes but {n_bytes} are stored",
                elements * dtype.size()
            )));
        }
        let what = format!("data of {name}");
        let (bytes, small) = if n_bytes <= SMALL_PAYLOAD {
            let start = r.pos;
            let small = r.bytes(n_bytes, &what).map_err(&err)?;
            (start..r.pos, Some(small))
        } else {
            (r.skip(n_bytes, &what).map_err(&err)?, None)
        };
        if variables.insert(name.clone(), Variable { shape, dtype, bytes, small }).is_some() {
            return Err(err(format!("variable {name} appears twice")));
        }
    }
    let mut aliases = BTreeMap::new();
    if version >= 3 {
        let n = r.u32("alias count").map_err(&err)?;
        if n > MAX_VARIABLES {
            return Err(err(format!("implausible alias count {n}")));
        }
        for _ in 0..n {
            let alias = r.string("alias name").map_err(&err)?;
            let target = r.string("alias target").map_err(&err)?;
            if !variables.contains_key(&target) {
                return Err(err(format!("alias {alias} points to missing variable {target}")));
            }
            aliases.insert(alias, target);
        }
    }
    if r.pos != len {
        return Err(err(format!(
            "{} unexpected bytes after the last entry (offset {}): not a CTranslate2 model or corrupt",
            len - r.pos,
            r.pos
        )));
    }
    Ok(Layout { binary_version: version, spec, revision, variables, aliases })
}

impl Ct2File {
    /// Reads and parses `path`.
    pub fn open(path: &Path) -> Result<Ct2File, Ct2Error> {
        let data = std::fs::read(path).map_err(|e| Ct2Error {
            path: path.to_path_buf(),
            reason: if e.kind() == std::io::ErrorKind::NotFound {
                "not found (install the models with `bash ops/setup.sh`)".to_string()
            } else {
                format!("cannot be read: {e}")
            },
        })?;
        Ct2File::parse(path, data)
    }

    /// Parses bytes that came from `path` (used only in messages). Every byte must be consumed.
    pub fn parse(path: &Path, data: Vec<u8>) -> Result<Ct2File, Ct2Error> {
        let len = data.len();
        let layout = read_layout(path, std::io::Cursor::new(&data[..]), len)?;
        Ok(Ct2File::from_layout(path, layout, data, len as u64, false))
    }

    /// Reads only the header of `path` (names, types, shapes, aliases and the small scalar
    /// attributes), seeking over the payloads: the checks of [`Ct2File::whisper_dims`] work,
    /// the weight accessors do not.
    pub fn open_header(path: &Path) -> Result<Ct2File, Ct2Error> {
        let err = |e: std::io::Error| Ct2Error {
            path: path.to_path_buf(),
            reason: if e.kind() == std::io::ErrorKind::NotFound {
                "not found".to_string()
            } else {
                format!("cannot be read: {e}")
            },
        };
        let file = std::fs::File::open(path).map_err(err)?;
        let len = file.metadata().map_err(err)?.len();
        let layout = read_layout(path, BufReader::new(file), len as usize)?;
        Ok(Ct2File::from_layout(path, layout, Vec::new(), len, true))
    }

    fn from_layout(path: &Path, layout: Layout, data: Vec<u8>, file_bytes: u64, header_only: bool) -> Ct2File {
        let Layout { binary_version, spec, revision, variables, aliases } = layout;
        Ct2File {
            path: path.to_path_buf(),
            binary_version,
            spec,
            revision,
            data,
            file_bytes,
            header_only,
            variables,
            aliases,
        }
    }

    /// Size of the file on disk.
    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Total number of bytes in the file (all consumed by the parser).
    pub fn len(&self) -> usize {
        self.file_bytes as usize
    }

    pub fn is_empty(&self) -> bool {
        self.file_bytes == 0
    }

    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.variables.keys().map(String::as_str)
    }

    pub fn aliases(&self) -> &BTreeMap<String, String> {
        &self.aliases
    }

    /// The name `name` stands for (itself unless it is an alias).
    pub fn resolve<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases.get(name).map(String::as_str).unwrap_or(name)
    }

    /// Looks a variable up by name, following aliases.
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.variables.get(self.resolve(name))
    }

    fn error(&self, reason: String) -> Ct2Error {
        Ct2Error { path: self.path.clone(), reason }
    }

    fn require(&self, name: &str) -> Result<&Variable, Ct2Error> {
        self.get(name).ok_or_else(|| self.error(format!("variable {name} is missing")))
    }

    /// A variable's bytes (payloads are not aligned, so they are decoded from bytes).
    fn payload<'a>(&'a self, name: &str, v: &'a Variable) -> Result<&'a [u8], Ct2Error> {
        match &v.small {
            Some(small) => Ok(small),
            None if self.header_only => Err(self.error(format!("variable {name}: only the header was read"))),
            None => Ok(&self.data[v.bytes.clone()]),
        }
    }

    /// A variable's shape, or an error naming it when missing.
    pub fn shape(&self, name: &str) -> Result<&[usize], Ct2Error> {
        Ok(&self.require(name)?.shape)
    }

    /// A float variable converted to f32 (from f32, f16 or bf16), row-major.
    pub fn f32(&self, name: &str) -> Result<Vec<f32>, Ct2Error> {
        let v = self.require(name)?;
        let raw = self.payload(name, v)?;
        Ok(match v.dtype {
            DType::F32 => raw.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect(),
            DType::F16 => {
                raw.chunks_exact(2).map(|c| half::f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32()).collect()
            }
            DType::BF16 => {
                raw.chunks_exact(2).map(|c| half::bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32()).collect()
            }
            other => return Err(self.error(format!("variable {name} is {other:?}, expected a float type"))),
        })
    }

    /// A float16 variable as stored (`None` when it is stored in another type).
    pub fn f16(&self, name: &str) -> Result<Option<Vec<half::f16>>, Ct2Error> {
        let v = self.require(name)?;
        if v.dtype != DType::F16 {
            return Ok(None);
        }
        let raw = self.payload(name, v)?;
        Ok(Some(raw.chunks_exact(2).map(|c| half::f16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect()))
    }

    /// The name of the per-row scale of the int8 weight `name` (after aliases).
    fn scale_name(&self, name: &str) -> String {
        format!("{}_scale", self.resolve(name))
    }

    /// Whether weight `name` is stored in CTranslate2's int8 layout.
    pub fn is_quantized(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v.dtype == DType::I8 && v.shape.len() >= 2)
    }

    /// Checks the storage of a weight matrix: float, or int8 with one float scale per row.
    fn check_weight(&self, name: &str) -> Result<(), Ct2Error> {
        let v = self.require(name)?;
        match v.dtype {
            DType::F32 | DType::F16 | DType::BF16 => Ok(()),
            DType::I8 => {
                let scale = self.scale_name(name);
                let s = self.get(&scale).ok_or_else(|| {
                    self.error(format!("variable {name} is int8 but {scale} (its per-row scale) is missing"))
                })?;
                if s.shape != [v.shape[0]] || !matches!(s.dtype, DType::F32 | DType::F16 | DType::BF16) {
                    return Err(self.error(format!(
                        "variable {scale} is {:?} of shape {:?}, expected float [{}] (one scale per row of {name})",
                        s.dtype, s.shape, v.shape[0]
                    )));
                }
                Ok(())
            }
            DType::I16 => Err(self.error(format!(
                "variable {name} is int16 (CTranslate2 `int16` quantization), which Scribe does not run; \
                 convert the model with --quantization int8, float16 or float32"
            ))),
            DType::I32 => Err(self.error(format!("variable {name} is int32, expected a float or int8 weight"))),
        }
    }

    /// A weight matrix as stored: `[rows, cols]` with `cols` the product of the other
    /// dimensions. Int8 weights come with their per-row scales.
    pub fn weight(&self, name: &str) -> Result<(StoredWeight, usize, usize), Ct2Error> {
        self.check_weight(name)?;
        let v = self.require(name)?;
        let rows = v.shape.first().copied().unwrap_or(1);
        let cols = v.shape.iter().skip(1).product::<usize>();
        let w = match v.dtype {
            DType::I8 => {
                let q = self.payload(name, v)?.iter().map(|&b| b as i8).collect();
                let scale = self.f32(&self.scale_name(name))?;
                if let Some(bad) = scale.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
                    return Err(self.error(format!(
                        "variable {} has scale {} at row {bad}: not a positive number",
                        self.scale_name(name),
                        scale[bad]
                    )));
                }
                StoredWeight::I8 { q, row_scale: scale.iter().map(|s| 1.0 / s).collect() }
            }
            DType::F16 => StoredWeight::F16(self.f16(name)?.expect("checked float16")),
            _ => StoredWeight::F32(self.f32(name)?),
        };
        Ok((w, rows, cols))
    }

    /// A weight as f32, int8 weights dequantized (`q / scale`, per row).
    pub fn dequantized(&self, name: &str) -> Result<Vec<f32>, Ct2Error> {
        let (w, _, cols) = self.weight(name)?;
        Ok(w.into_f32(cols))
    }

    /// How the weights are stored: "float32", "float16", "bfloat16", "int8" (float32 around
    /// it), "int8+float16" or "int8+bfloat16" (CTranslate2's `int8_float16`…).
    pub fn weights_kind(&self) -> String {
        let weights = |quantized: bool| {
            self.variables.iter().filter(move |(n, v)| {
                v.shape.len() >= 2 && n.ends_with("/weight") && (v.dtype == DType::I8) == quantized
            })
        };
        let float_name = |d: DType| match d {
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            _ => "float32",
        };
        // The float type of the rest: the layer norms (never quantized).
        let rest = self
            .variables
            .iter()
            .find(|(n, _)| n.ends_with("layer_norm/gamma"))
            .map(|(_, v)| v.dtype)
            .unwrap_or(DType::F32);
        if weights(true).next().is_none() {
            return float_name(weights(false).next().map_or(rest, |(_, v)| v.dtype)).to_string();
        }
        match rest {
            DType::F16 | DType::BF16 => format!("int8+{}", float_name(rest)),
            _ => "int8".to_string(),
        }
    }

    /// A scalar integer or boolean attribute.
    pub fn scalar_int(&self, name: &str) -> Result<i64, Ct2Error> {
        let v = self.require(name)?;
        if !v.shape.is_empty() && v.shape.iter().product::<usize>() != 1 {
            return Err(self.error(format!("variable {name} should be a scalar, has shape {:?}", v.shape)));
        }
        let raw = self.payload(name, v)?;
        Ok(match v.dtype {
            DType::I8 => raw[0] as i8 as i64,
            DType::I16 => i16::from_le_bytes([raw[0], raw[1]]) as i64,
            DType::I32 => i32::from_le_bytes(raw[..4].try_into().unwrap()) as i64,
            other => return Err(self.error(format!("variable {name} is {other:?}, expected an integer"))),
        })
    }
}

/// The dimensions of a Whisper model, derived from its variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhisperDims {
    pub n_mels: usize,
    pub d_model: usize,
    pub n_heads: usize,
    pub d_ffn: usize,
    pub n_audio_ctx: usize,
    pub n_text_ctx: usize,
    pub n_vocab: usize,
    pub n_encoder_layers: usize,
    pub n_decoder_layers: usize,
}

impl Ct2File {
    /// Checks that this is a complete Whisper model and returns its dimensions. Every name and
    /// shape the encoder and decoder read is verified here, so loading cannot fail later.
    pub fn whisper_dims(&self) -> Result<WhisperDims, Ct2Error> {
        if self.spec != "WhisperSpec" {
            return Err(self.error(format!("is a CTranslate2 {:?} model, not Whisper (spec WhisperSpec)", self.spec)));
        }
        let conv1 = self.shape("encoder/conv1/weight")?;
        if conv1.len() != 3 || conv1[2] != 3 {
            return Err(self.error(format!("encoder/conv1/weight has shape {conv1:?}, expected [d_model, n_mels, 3]")));
        }
        let (d_model, n_mels) = (conv1[0], conv1[1]);
        let count_layers = |prefix: &str| {
            (0..).take_while(|i| self.get(&format!("{prefix}/layer_{i}/ffn/linear_0/weight")).is_some()).count()
        };
        let n_heads = self.scalar_int("encoder/num_heads")?;
        let dec_heads = self.scalar_int("decoder/num_heads")?;
        if n_heads <= 0 || dec_heads != n_heads || d_model % n_heads as usize != 0 {
            return Err(self.error(format!(
                "inconsistent head counts (encoder {n_heads}, decoder {dec_heads}) for width {d_model}"
            )));
        }
        let first = |name: &str| -> Result<usize, Ct2Error> {
            self.shape(name)?.first().copied().ok_or_else(|| self.error(format!("variable {name} has no dimensions")))
        };
        let dims = WhisperDims {
            n_mels,
            d_model,
            n_heads: n_heads as usize,
            d_ffn: first("encoder/layer_0/ffn/linear_0/weight")?,
            n_audio_ctx: first("encoder/position_encodings/encodings")?,
            n_text_ctx: first("decoder/position_encodings/encodings")?,
            n_vocab: first("decoder/embeddings/weight")?,
            n_encoder_layers: count_layers("encoder"),
            n_decoder_layers: count_layers("decoder"),
        };
        if dims.n_encoder_layers == 0 || dims.n_decoder_layers == 0 {
            return Err(self.error("has no encoder or decoder layers".into()));
        }
        let (d, f) = (dims.d_model, dims.d_ffn);
        let mut expected: Vec<(String, Vec<usize>)> = vec![
            ("encoder/conv1/bias".into(), vec![d]),
            ("encoder/conv2/weight".into(), vec![d, d, 3]),
            ("encoder/conv2/bias".into(), vec![d]),
            ("encoder/position_encodings/encodings".into(), vec![dims.n_audio_ctx, d]),
            ("encoder/layer_norm/gamma".into(), vec![d]),
            ("encoder/layer_norm/beta".into(), vec![d]),
            ("decoder/embeddings/weight".into(), vec![dims.n_vocab, d]),
            ("decoder/projection/weight".into(), vec![dims.n_vocab, d]),
            ("decoder/position_encodings/encodings".into(), vec![dims.n_text_ctx, d]),
            ("decoder/layer_norm/gamma".into(), vec![d]),
            ("decoder/layer_norm/beta".into(), vec![d]),
        ];
        let linear = |expected: &mut Vec<(String, Vec<usize>)>, name: String, out: usize, inp: usize| {
            expected.push((format!("{name}/weight"), vec![out, inp]));
            expected.push((format!("{name}/bias"), vec![out]));
        };
        let norm = |expected: &mut Vec<(String, Vec<usize>)>, name: String| {
            expected.push((format!("{name}/gamma"), vec![d]));
            expected.push((format!("{name}/beta"), vec![d]));
        };
        for (side, n) in [("encoder", dims.n_encoder_layers), ("decoder", dims.n_decoder_layers)] {
            for i in 0..n {
                let p = format!("{side}/layer_{i}");
                norm(&mut expected, format!("{p}/self_attention/layer_norm"));
                linear(&mut expected, format!("{p}/self_attention/linear_0"), 3 * d, d);
                linear(&mut expected, format!("{p}/self_attention/linear_1"), d, d);
                norm(&mut expected, format!("{p}/ffn/layer_norm"));
                linear(&mut expected, format!("{p}/ffn/linear_0"), f, d);
                linear(&mut expected, format!("{p}/ffn/linear_1"), d, f);
                if side == "decoder" {
                    norm(&mut expected, format!("{p}/attention/layer_norm"));
                    linear(&mut expected, format!("{p}/attention/linear_0"), d, d);
                    linear(&mut expected, format!("{p}/attention/linear_1"), 2 * d, d);
                    linear(&mut expected, format!("{p}/attention/linear_2"), d, d);
                }
            }
        }
        for (name, shape) in &expected {
            let v = self.require(name)?;
            if &v.shape != shape {
                return Err(self.error(format!("variable {name} has shape {:?}, expected {shape:?}", v.shape)));
            }
            if name.ends_with("/weight") {
                self.check_weight(name)?;
            } else if !matches!(v.dtype, DType::F32 | DType::F16 | DType::BF16) {
                return Err(self.error(format!("variable {name} is {:?}, expected a float type", v.dtype)));
            }
        }
        // Every Whisper model ties the output projection to the token embedding (CTranslate2
        // stores it as an alias); the decoder computes the logits with the embedding.
        if self.resolve("decoder/projection/weight") != "decoder/embeddings/weight"
            && !self.header_only
            && self.payload("decoder/projection/weight", self.require("decoder/projection/weight")?)?
                != self.payload("decoder/embeddings/weight", self.require("decoder/embeddings/weight")?)?
        {
            return Err(self.error(
                "decoder/projection/weight differs from decoder/embeddings/weight; Whisper ties them and \
                 Scribe runs only tied output projections"
                    .into(),
            ));
        }
        if self.get("decoder/projection/bias").is_some() {
            return Err(self.error("decoder/projection/bias exists; Whisper's output projection has no bias".into()));
        }
        for flag in ["decoder/alibi", "decoder/start_from_zero_embedding", "decoder/layernorm_embedding"] {
            if self.get(flag).is_some() && self.scalar_int(flag)? != 0 {
                return Err(self.error(format!("{flag} is set; Whisper does not use it")));
            }
        }
        if self.get("decoder/scale_embeddings").is_some() && self.scalar_int("decoder/scale_embeddings")? != 0 {
            return Err(self.error("scaled decoder embeddings are not supported".into()));
        }
        if self.get("decoder/activation").is_some() && self.scalar_int("decoder/activation")? != 3 {
            return Err(self.error("activation is not GELU, unlike every Whisper model".into()));
        }
        Ok(dims)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a CTranslate2 v6 file (used to test the parser without the real models).
    pub(crate) fn write_ct2(
        spec: &str,
        vars: &[(&str, Vec<usize>, DType, Vec<u8>)],
        aliases: &[(&str, &str)],
    ) -> Vec<u8> {
        fn s(out: &mut Vec<u8>, v: &str) {
            out.extend(((v.len() + 1) as u16).to_le_bytes());
            out.extend(v.as_bytes());
            out.push(0);
        }
        let mut out = Vec::new();
        out.extend(6u32.to_le_bytes());
        s(&mut out, spec);
        out.extend(3u32.to_le_bytes());
        out.extend((vars.len() as u32).to_le_bytes());
        for (name, shape, dtype, bytes) in vars {
            s(&mut out, name);
            out.push(shape.len() as u8);
            for d in shape {
                out.extend((*d as u32).to_le_bytes());
            }
            let id = [DType::F32, DType::I8, DType::I16, DType::I32, DType::F16, DType::BF16]
                .iter()
                .position(|x| x == dtype)
                .unwrap() as u8;
            out.push(id);
            out.extend((bytes.len() as u32).to_le_bytes());
            out.extend(bytes);
        }
        out.extend((aliases.len() as u32).to_le_bytes());
        for (a, t) in aliases {
            s(&mut out, a);
            s(&mut out, t);
        }
        out
    }

    fn small() -> Vec<u8> {
        let f16 = |xs: &[f32]| xs.iter().flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes()).collect();
        write_ct2(
            "WhisperSpec",
            &[
                ("a/weight", vec![2, 2], DType::F16, f16(&[1.0, -2.0, 0.5, 3.0])),
                ("heads", vec![], DType::I16, 6i16.to_le_bytes().to_vec()),
            ],
            &[("b/weight", "a/weight")],
        )
    }

    #[test]
    fn parses_values_shapes_and_aliases() {
        let f = Ct2File::parse(Path::new("m.bin"), small()).unwrap();
        assert_eq!((f.binary_version, f.spec.as_str(), f.revision), (6, "WhisperSpec", 3));
        assert_eq!(f.f32("b/weight").unwrap(), vec![1.0, -2.0, 0.5, 3.0]);
        assert_eq!(f.shape("a/weight").unwrap(), &[2, 2]);
        assert_eq!(f.scalar_int("heads").unwrap(), 6);
        assert!(f.f32("heads").is_err());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = small();
        for n in 0..bytes.len() {
            let e = Ct2File::parse(Path::new("m.bin"), bytes[..n].to_vec()).err().expect("truncated file parsed");
            assert!(e.to_string().contains("m.bin"), "{e}");
        }
    }

    #[test]
    fn trailing_bytes_and_garbage_are_errors() {
        let mut bytes = small();
        bytes.push(0);
        assert!(Ct2File::parse(Path::new("m.bin"), bytes).is_err());
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let garbage: Vec<u8> = (0..10_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert!(Ct2File::parse(Path::new("m.bin"), garbage).is_err());
    }

    #[test]
    fn foreign_spec_is_rejected_by_name() {
        let bytes = write_ct2("TransformerSpec", &[], &[]);
        let f = Ct2File::parse(Path::new("m.bin"), bytes).unwrap();
        let e = f.whisper_dims().unwrap_err().to_string();
        assert!(e.contains("TransformerSpec") && e.contains("m.bin"), "{e}");
    }
}
