//! Reading the embedder's `model.safetensors` tensor by tensor, straight into each tensor's own
//! memory.
//!
//! Reading the whole file into memory and letting candle copy every tensor out of it held the
//! weights twice while the model loaded: a 30-turn headless interview peaked at 201 MiB of
//! resident memory for 122 MiB after the load. Here the file is read in chunks of
//! [`CHUNK`] bytes that are decoded into the tensor's element vector, which the encoder then
//! owns without a copy, so the load costs the weights once plus one chunk.
//!
//! The format: an 8-byte little-endian header length, a JSON header naming each tensor's
//! `dtype`, `shape` and `data_offsets` (relative to the end of the header), then the data.
//! `F32` and `I64` tensors are read (what all-MiniLM-L6-v2 ships); any other dtype is an error
//! naming the tensor, and so is a header or an offset that does not fit the file.

use std::collections::HashMap;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

#[cfg(test)]
use candle_core::{Device, Tensor};
use serde::Deserialize;

use super::EmbedError;

/// Bytes read at a time.
const CHUNK: usize = 1 << 20;
/// Largest header accepted: a real one is a few KiB; this bounds a corrupt length.
const MAX_HEADER: u64 = 16 << 20;

#[derive(Debug, Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// One tensor's values as read, in the file's row-major order.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the I64 position ids are read only by candle's model in tests"
    )
)]
pub(crate) enum Raw {
    F32 { shape: Vec<usize>, values: Vec<f32> },
    I64 { shape: Vec<usize>, values: Vec<i64> },
}

/// Every tensor of the safetensors file at `path`, as candle tensors on the CPU (each takes
/// its values without a copy).
#[cfg(test)]
pub(super) fn read_tensors(path: &Path) -> Result<HashMap<String, Tensor>, EmbedError> {
    read_raw(path)?
        .into_iter()
        .map(|(name, raw)| {
            let tensor = match raw {
                Raw::F32 { shape, values } => Tensor::from_vec(values, shape, &Device::Cpu),
                Raw::I64 { shape, values } => Tensor::from_vec(values, shape, &Device::Cpu),
            };
            tensor
                .map(|t| (name.clone(), t))
                .map_err(|e| EmbedError::Load {
                    file: path.to_path_buf(),
                    reason: format!("tensor {name}: {e}"),
                })
        })
        .collect()
}

/// Every tensor of the safetensors file at `path`.
pub(super) fn read_raw(path: &Path) -> Result<HashMap<String, Raw>, EmbedError> {
    let fail = |reason: String| EmbedError::Load {
        file: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let file_len = file.metadata().map_err(|e| fail(e.to_string()))?.len();
    let mut reader = BufReader::with_capacity(CHUNK, file);
    let mut len_bytes = [0u8; 8];
    reader
        .read_exact(&mut len_bytes)
        .map_err(|e| fail(format!("cannot read the header length: {e}")))?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER || 8 + header_len > file_len {
        return Err(fail(format!(
            "header length {header_len} does not fit the file ({file_len} bytes)"
        )));
    }
    let mut header = vec![0u8; usize::try_from(header_len).map_err(|e| fail(e.to_string()))?];
    reader
        .read_exact(&mut header)
        .map_err(|e| fail(format!("cannot read the header: {e}")))?;
    let mut entries: HashMap<String, serde_json::Value> =
        serde_json::from_slice(&header).map_err(|e| fail(format!("bad header: {e}")))?;
    entries.remove("__metadata__");
    let mut entries: Vec<(String, Entry)> = entries
        .into_iter()
        .map(|(name, value)| {
            serde_json::from_value(value)
                .map(|entry| (name.clone(), entry))
                .map_err(|e| fail(format!("tensor {name}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    // In file order, so the reads go forward.
    entries.sort_by_key(|(_, e)| e.data_offsets[0]);
    let data_start = 8 + header_len;
    let mut chunk = vec![0u8; CHUNK];
    let mut tensors = HashMap::with_capacity(entries.len());
    for (name, entry) in entries {
        let [start, end] = entry.data_offsets;
        let count: usize = entry.shape.iter().product();
        let width: u64 = match entry.dtype.as_str() {
            "F32" => 4,
            "I64" => 8,
            other => {
                return Err(fail(format!(
                    "tensor {name}: dtype {other} is not supported"
                )));
            }
        };
        if end < start || end - start != count as u64 * width || data_start + end > file_len {
            return Err(fail(format!(
                "tensor {name}: offsets {start}..{end} do not fit its shape {:?} or the file",
                entry.shape
            )));
        }
        reader
            .seek(SeekFrom::Start(data_start + start))
            .map_err(|e| fail(format!("tensor {name}: {e}")))?;
        let shape = entry.shape;
        let tensor = if width == 4 {
            read_values(
                &mut reader,
                &mut chunk,
                end - start,
                count,
                f32::from_le_bytes,
            )
            .map(|values| Raw::F32 { shape, values })
        } else {
            read_values(
                &mut reader,
                &mut chunk,
                end - start,
                count,
                i64::from_le_bytes,
            )
            .map(|values| Raw::I64 { shape, values })
        }
        .map_err(|e| fail(format!("tensor {name}: {e}")))?;
        tensors.insert(name, tensor);
    }
    Ok(tensors)
}

/// Reads `bytes` bytes as `count` values of `W` bytes each, decoded by `decode`, a chunk at
/// a time.
fn read_values<T, const W: usize>(
    reader: &mut impl Read,
    chunk: &mut [u8],
    bytes: u64,
    count: usize,
    decode: fn([u8; W]) -> T,
) -> Result<Vec<T>, Box<dyn std::error::Error>> {
    let mut values = Vec::with_capacity(count);
    let mut left = bytes;
    while left > 0 {
        let n = read_chunk(reader, chunk, &mut left)?;
        for piece in chunk.get(..n).unwrap_or_default().chunks_exact(W) {
            values.push(decode(<[u8; W]>::try_from(piece)?));
        }
    }
    Ok(values)
}

/// Reads the next piece of a tensor (at most a chunk, a whole number of 8 bytes unless it is
/// the tensor's end) into `chunk`; returns how many bytes it holds.
fn read_chunk(reader: &mut impl Read, chunk: &mut [u8], left: &mut u64) -> std::io::Result<usize> {
    let n = usize::try_from(*left).map_or(chunk.len(), |l| l.min(chunk.len()));
    let piece = chunk
        .get_mut(..n)
        .ok_or_else(|| std::io::Error::other("chunk out of range"))?;
    reader.read_exact(piece)?;
    *left -= n as u64;
    Ok(n)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn write(path: &Path, header: &str, data: &[u8]) {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn reads_what_candle_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.safetensors");
        let weights = Tensor::arange(0f32, 6.0, &Device::Cpu)
            .unwrap()
            .reshape((2, 3))
            .unwrap();
        let ids = Tensor::new(&[7i64, -1], &Device::Cpu).unwrap();
        candle_core::safetensors::save(
            &HashMap::from([("w".to_owned(), weights.clone()), ("ids".to_owned(), ids)]),
            &path,
        )
        .unwrap();
        let read = read_tensors(&path).unwrap();
        assert_eq!(
            read["w"].to_vec2::<f32>().unwrap(),
            weights.to_vec2::<f32>().unwrap()
        );
        assert_eq!(read["ids"].to_vec1::<i64>().unwrap(), vec![7, -1]);
    }

    #[test]
    fn bad_files_are_load_errors_naming_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.safetensors");
        let cases = [
            (
                r#"{"w":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}"#,
                vec![0u8; 2],
                "F16",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
                vec![0u8; 4],
                "offsets",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
                vec![0u8; 8],
                "offsets",
            ),
            ("{not json", Vec::new(), "bad header"),
        ];
        for (header, data, expected) in cases {
            write(&path, header, &data);
            let err = read_tensors(&path).unwrap_err().to_string();
            assert!(
                err.contains(expected) && err.contains("bad.safetensors"),
                "{err}"
            );
        }
        std::fs::write(&path, u64::MAX.to_le_bytes()).unwrap();
        let err = read_tensors(&path).unwrap_err().to_string();
        assert!(err.contains("does not fit"), "{err}");
    }
}
