//! Installing model files into the cache atomically, scratch directories, and finding model
//! files inside an unpacked archive.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::Files;

/// How [`install_files`] may take a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transfer {
    /// The source is our scratch copy: move it.
    Move,
    /// The source belongs to someone else (the HF cache): hard-link it, or copy it.
    Share,
}

/// Places every file of `files` into `dest_dir` under its own name, atomically, file by file.
///
/// Each file first lands under a temporary name in `dest_dir` and is then renamed, so a
/// completeness check never counts a half-written file as present.
pub(crate) fn install_files(
    files: &[PathBuf],
    dest_dir: &Path,
    transfer: Transfer,
) -> Result<(), String> {
    std::fs::create_dir_all(dest_dir)
        .map_err(|e| format!("cannot create {}: {e}", dest_dir.display()))?;
    for path in files {
        let name = path
            .file_name()
            .ok_or_else(|| format!("{} names no file", path.display()))?
            .to_string_lossy()
            .into_owned();
        // The HF cache exposes files as symlinks into its blob store; link the blob itself.
        let src = std::fs::canonicalize(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let staging = dest_dir.join(format!(".{name}.partial-{}", unique_suffix()));
        let staged = match transfer {
            Transfer::Move => std::fs::rename(&src, &staging),
            Transfer::Share => std::fs::hard_link(&src, &staging),
        }
        .or_else(|_| std::fs::copy(&src, &staging).map(|_| ()));
        let installed = staged.and_then(|()| std::fs::rename(&staging, dest_dir.join(&name)));
        if let Err(e) = installed {
            // Best effort: a leftover staging file is harmless, only untidy.
            let _ = std::fs::remove_file(&staging);
            return Err(format!(
                "cannot install {name} into {}: {e}",
                dest_dir.display()
            ));
        }
    }
    Ok(())
}

/// A scratch directory removed (with its contents) when dropped.
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `<parent>/.tmp-<label>-<unique>`; `parent` should be on the cache's file system
    /// so that installing is a rename, not a copy.
    pub(crate) fn create(parent: &Path, label: &str) -> Result<Self, String> {
        let path = parent.join(format!(".tmp-{label}-{}", unique_suffix()));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create scratch directory {}: {e}", path.display()))?;
        Ok(Self(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a leftover scratch directory wastes disk space but breaks nothing.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Process id plus nanoseconds: distinct across concurrent processes and successive calls.
fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// The model files of the first directory under `root` (breadth first, names sorted, at most
/// `max_depth` levels down) that `files` calls complete.
pub(crate) fn find_in_tree(root: &Path, files: Files, max_depth: usize) -> Option<Vec<PathBuf>> {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..=max_depth {
        let mut next = Vec::new();
        for dir in level {
            if let Ok(found) = files.locate(&dir) {
                return Some(found);
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut children: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect();
            children.sort();
            next.extend(children);
        }
        level = next;
    }
    None
}
