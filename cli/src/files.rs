//! Opening the files a user names (graphs, `.npy` inputs) without ever blocking on one.
//!
//! A FIFO, a character device or a socket given where a file is expected would block
//! `open` or `read` forever (a FIFO until someone writes to it) or never end (`/dev/zero`).
//! Such paths are refused from their metadata, before they are opened; the open itself is
//! non-blocking, and the opened file is checked again, so a path swapped in between is
//! refused too.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a non-regular file is, for messages.
fn kind(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file (symbolic links followed); returns
/// the file and its length.
///
/// # Errors
/// A message naming the path: missing, unreadable, or not a regular file (directory,
/// FIFO, device, socket), which is never opened.
pub fn open_regular(path: &Path) -> Result<(File, u64), String> {
    let at = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {at}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{at} is {}, not a regular file; refused without reading it",
            kind(meta.file_type())
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open {at}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {at}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{at} is {}, not a regular file; refused without reading it",
            kind(meta.file_type())
        ));
    }
    Ok((file, meta.len()))
}

/// Reads a whole regular file of at most `limit` bytes.
///
/// # Errors
/// As [`open_regular`], a file above `limit`, or a failed read.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;

    let at = path.display();
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(format!(
            "{at} holds {len} bytes, more than the {limit} accepted"
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {at}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{at} grew past the {limit} bytes accepted"));
    }
    Ok(bytes)
}

/// Creates (or truncates) `path` for writing, refusing a path that exists and is not a
/// regular file: opening a FIFO for writing would block until a reader comes, and
/// writing to a device is not what `--outputs` means. The open is non-blocking.
///
/// # Errors
/// Such a path (`InvalidInput`, naming what it is), or the failed open.
pub fn create_regular(path: &Path) -> std::io::Result<File> {
    let refuse = |meta: std::fs::Metadata| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file",
                path.display(),
                kind(meta.file_type())
            ),
        )
    };
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(refuse(meta));
    }
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse(meta));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_being_opened() {
        let dir = tempfile_dir();
        let fifo = dir.join("x.npy");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let error = open_regular(&fifo).unwrap_err();
        assert!(error.contains("is a FIFO"), "{error}");
        let error = open_regular(&dir).unwrap_err();
        assert!(error.contains("is a directory"), "{error}");
        let error = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(error.contains("is a character device"), "{error}");
        let error = create_regular(&fifo).unwrap_err();
        assert!(error.to_string().contains("is a FIFO"), "{error}");
        let file = dir.join("g.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read_regular(&file, 2).unwrap(), b"{}");
        assert!(
            read_regular(&file, 1)
                .unwrap_err()
                .contains("more than the 1")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hipdnn_files_test_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
