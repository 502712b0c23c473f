//! Noticing that a pack's sources changed: a polling fingerprint of the folder (paths, sizes
//! and modification times), skipping build output and state (`target`, `.kindgi`, `.venv`,
//! `node_modules`, `.git`, `__pycache__`, `dist`) and the discovery file. Polling needs no
//! platform support and, at one folder walk per interval, costs nothing for a pack's size.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How often the folder is looked at.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

const SKIP_DIRS: [&str; 8] = [
    "target",
    ".kindgi",
    ".venv",
    "venv",
    "node_modules",
    ".git",
    "__pycache__",
    "dist",
];

/// A fingerprint of the pack's source files: equal fingerprints, no change.
pub fn fingerprint(dir: &Path) -> u64 {
    let mut entries: Vec<(String, u64, u128)> = Vec::new();
    walk(dir, dir, &mut entries, 0);
    entries.sort();
    // FNV-1a over the sorted entries: stable within a process, which is all a comparison needs.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (p, len, mtime) in entries {
        eat(p.as_bytes());
        eat(&len.to_le_bytes());
        eat(&mtime.to_le_bytes());
    }
    h
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, u64, u128)>, depth: usize) {
    if depth > 16 {
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&name.as_ref()) {
                walk(root, &entry.path(), out, depth + 1);
            }
            continue;
        }
        if name.starts_with(".kindgirc") || name.ends_with(".pyc") || name.ends_with('~') {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let rel = entry
            .path()
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push((rel, meta.len(), mtime));
    }
}
