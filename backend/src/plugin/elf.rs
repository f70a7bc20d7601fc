//! The checks a plugin file passes before it is given to `dlopen`.
//!
//! `dlopen` maps a shared object's `PT_LOAD` segments straight from the file. When the
//! file is shorter than its program headers say (an interrupted copy), the pages past
//! the end are mapped anyway and the loader's first read of them (the dynamic section,
//! relocations) raises `SIGBUS`, which kills the process: one partial file in the plugin
//! directory would stop every program that makes a handle. A file built for another
//! machine is refused by the loader with a misleading "No such file or directory". So
//! the headers are read first, with plain reads (nothing is mapped or run), and a file
//! that the loader could not map whole is refused with what is wrong in it.
//!
//! What is checked, in this order: the ELF magic; the class (64-bit) and the byte order
//! of this process; type `ET_DYN` (a shared object); the machine of this process
//! (`e_machine`); a program header table that lies within the file and has at least one
//! entry; every `PT_LOAD` segment's file bytes `[p_offset, p_offset + p_filesz)` within
//! the file; the section header table, when there is one, within the file; the
//! `PT_DYNAMIC` segment, when there is one, within the file and holding a dynamic array
//! that names a string and a symbol table before its `DT_NULL` end. That is what the
//! loader reads from the file; everything else it reads from the mapped segments. A file
//! whose tail was zero-filled (an interrupted copy that had preallocated the whole size)
//! has every table in bounds, but its dynamic array reads as empty, and glibc's loader
//! dereferences the missing `DT_STRTAB` (SIGSEGV).
//!
//! Hand-written rather than through an object-file crate: these are a dozen fixed-offset
//! fields of two tables, while `object`'s ELF reader (the smallest that fits) is about
//! 15,000 lines of parsing for sections, symbols and notes the backend never looks at.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Bytes of an ELF64 file header.
const HEADER_SIZE: usize = 64;
/// Bytes of an ELF64 program header table entry.
const PROGRAM_HEADER_SIZE: u64 = 56;
/// Bytes of an ELF64 section header table entry.
const SECTION_HEADER_SIZE: u64 = 64;

const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
const ELFCLASS32: u8 = 1;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const ELFDATA2MSB: u8 = 2;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
/// Bytes of an ELF64 dynamic array entry (`d_tag`, `d_val`).
const DYNAMIC_ENTRY_SIZE: u64 = 16;
/// The most of a dynamic segment read: a real one has a few dozen entries.
const MAX_DYNAMIC_BYTES: u64 = 1 << 20;
const DT_NULL: u64 = 0;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
/// `e_phnum` saying the real count is in the first section header; the loader does not
/// support it either.
const PN_XNUM: u16 = 0xffff;

/// This process's byte order, as an `EI_DATA` value.
const HOST_DATA: u8 = if cfg!(target_endian = "little") {
    ELFDATA2LSB
} else {
    ELFDATA2MSB
};

/// This process's `e_machine`, where known (other architectures skip that check).
const HOST_MACHINE: Option<u16> = if cfg!(target_arch = "x86_64") {
    Some(62)
} else if cfg!(target_arch = "aarch64") {
    Some(183)
} else if cfg!(target_arch = "riscv64") {
    Some(243)
} else if cfg!(target_arch = "powerpc64") {
    Some(21)
} else if cfg!(target_arch = "s390x") {
    Some(22)
} else if cfg!(target_arch = "loongarch64") {
    Some(258)
} else {
    None
};

/// A readable name for an `e_machine` value.
fn machine_name(machine: u16) -> &'static str {
    match machine {
        3 => "x86 (32-bit)",
        8 => "MIPS",
        20 => "PowerPC",
        21 => "PowerPC64",
        22 => "S/390",
        40 => "ARM (32-bit)",
        62 => "x86-64",
        183 => "AArch64",
        243 => "RISC-V",
        258 => "LoongArch",
        _ => "another machine",
    }
}

/// Why a file is not a shared object this process can load.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// Shorter than an ELF header.
    #[error("the file is {size} bytes, shorter than an ELF header ({HEADER_SIZE} bytes)")]
    TooShort {
        /// The file size.
        size: u64,
    },
    /// No ELF magic.
    #[error("not an ELF file (it starts with {start:02x?}, not 7f 45 4c 46)")]
    NotElf {
        /// The first four bytes.
        start: [u8; 4],
    },
    /// 32-bit (or an unknown class).
    #[error("its ELF class is {class} ({}), but this process is 64-bit", class_name(*.class))]
    WrongClass {
        /// `EI_CLASS`.
        class: u8,
    },
    /// The other byte order.
    #[error("its byte order is {} (EI_DATA {data}), but this process is {}",
            data_name(*.data), data_name(HOST_DATA))]
    WrongByteOrder {
        /// `EI_DATA`.
        data: u8,
    },
    /// An executable, a relocatable object, a core file.
    #[error("its ELF type is {e_type} ({}), not a shared object (ET_DYN)", type_name(*.e_type))]
    NotSharedObject {
        /// `e_type`.
        e_type: u16,
    },
    /// Built for another machine.
    #[error(
        "it is built for {} (e_machine {machine}), but this process runs on {} (e_machine {expected})",
        machine_name(*.machine),
        machine_name(*.expected)
    )]
    WrongMachine {
        /// The file's `e_machine`.
        machine: u16,
        /// This process's.
        expected: u16,
    },
    /// No program header table, or entries of the wrong size.
    #[error("its program header table is unusable: {why}")]
    BadProgramHeaders {
        /// What is wrong with it.
        why: String,
    },
    /// A table or segment that extends past the end of the file.
    #[error(
        "its {what} (file bytes {start}..{end}) extends past the end of the file ({size} bytes): \
         the file is truncated or corrupt"
    )]
    PastEnd {
        /// The table or segment, e.g. "PT_LOAD segment 2".
        what: String,
        /// Its first byte.
        start: u64,
        /// One past its last byte (may exceed `u64` in a corrupt file).
        end: u128,
        /// The file size.
        size: u64,
    },
    /// A dynamic array the loader cannot use (empty, unterminated, without a string or
    /// symbol table): a zero-filled or otherwise corrupt file.
    #[error(
        "its dynamic section (file bytes {start}..{end}) {why}: the file is truncated or corrupt"
    )]
    BadDynamic {
        /// Its first byte.
        start: u64,
        /// One past its last byte.
        end: u64,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Not a regular file (checked again on the open file).
    #[error("it is not a regular file")]
    NotRegular,
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Io(#[from] io::Error),
}

fn class_name(class: u8) -> &'static str {
    match class {
        ELFCLASS32 => "32-bit",
        ELFCLASS64 => "64-bit",
        _ => "unknown",
    }
}

fn data_name(data: u8) -> &'static str {
    match data {
        ELFDATA2LSB => "little endian",
        ELFDATA2MSB => "big endian",
        _ => "unknown",
    }
}

fn type_name(e_type: u16) -> &'static str {
    match e_type {
        0 => "none",
        1 => "a relocatable object",
        2 => "an executable",
        3 => "a shared object",
        4 => "a core file",
        _ => "unknown",
    }
}

/// Reads `N` bytes at `at` of `bytes` in this process's byte order (the file's, once
/// checked).
fn field<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes(field(bytes, at))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(field(bytes, at))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(field(bytes, at))
}

/// Checks that `[start, start + len)` lies within a file of `size` bytes.
fn within(what: impl FnOnce() -> String, start: u64, len: u64, size: u64) -> Result<(), ElfError> {
    let end = u128::from(start) + u128::from(len);
    if end > u128::from(size) {
        return Err(ElfError::PastEnd {
            what: what(),
            start,
            end,
            size,
        });
    }
    Ok(())
}

/// Checks the file at `path` as the module docs say. It is opened non-blocking (a FIFO
/// swapped in since it was found does not block) and must still be a regular file.
///
/// # Errors
/// The first problem found.
pub fn check_shared_object(path: &Path) -> Result<(), ElfError> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ElfError::NotRegular);
    }
    check_file(&file, meta.len())
}

fn check_file(file: &File, size: u64) -> Result<(), ElfError> {
    if size < HEADER_SIZE as u64 {
        return Err(ElfError::TooShort { size });
    }
    let mut header = [0u8; HEADER_SIZE];
    file.read_exact_at(&mut header, 0)?;
    let start: [u8; 4] = field(&header, 0);
    if start != ELF_MAGIC {
        return Err(ElfError::NotElf { start });
    }
    if header[4] != ELFCLASS64 {
        return Err(ElfError::WrongClass { class: header[4] });
    }
    if header[5] != HOST_DATA {
        return Err(ElfError::WrongByteOrder { data: header[5] });
    }
    let e_type = u16_at(&header, 16);
    if e_type != ET_DYN {
        return Err(ElfError::NotSharedObject { e_type });
    }
    let machine = u16_at(&header, 18);
    if let Some(expected) = HOST_MACHINE
        && machine != expected
    {
        return Err(ElfError::WrongMachine { machine, expected });
    }

    let (phoff, phentsize, phnum) = (
        u64_at(&header, 32),
        u64::from(u16_at(&header, 54)),
        u16_at(&header, 56),
    );
    let bad_phdrs = |why: String| Err(ElfError::BadProgramHeaders { why });
    if phnum == 0 {
        return bad_phdrs("it has no entries".to_owned());
    }
    if phnum == PN_XNUM {
        return bad_phdrs("its entry count is extended (PN_XNUM)".to_owned());
    }
    if phentsize != PROGRAM_HEADER_SIZE {
        return bad_phdrs(format!(
            "entries are {phentsize} bytes, not {PROGRAM_HEADER_SIZE}"
        ));
    }
    let table_len = u64::from(phnum) * PROGRAM_HEADER_SIZE;
    within(|| "program header table".to_owned(), phoff, table_len, size)?;
    // At most 65,534 entries of 56 bytes (3.5 MiB), and within the file.
    let mut table = vec![0u8; table_len as usize];
    file.read_exact_at(&mut table, phoff)?;
    let mut dynamic = None;
    for (index, entry) in table.chunks_exact(PROGRAM_HEADER_SIZE as usize).enumerate() {
        let (offset, filesz) = (u64_at(entry, 8), u64_at(entry, 32));
        match u32_at(entry, 0) {
            PT_LOAD => within(
                || format!("PT_LOAD segment of program header {index}"),
                offset,
                filesz,
                size,
            )?,
            PT_DYNAMIC => {
                within(
                    || format!("PT_DYNAMIC segment of program header {index}"),
                    offset,
                    filesz,
                    size,
                )?;
                dynamic.get_or_insert((offset, filesz));
            }
            _ => {}
        }
    }
    if let Some((offset, filesz)) = dynamic {
        check_dynamic(file, offset, filesz)?;
    }

    // The loader never reads sections; a section header table past the end (it is
    // usually last in the file) is what most truncations cut first.
    let (shoff, shnum) = (u64_at(&header, 40), u16_at(&header, 60));
    if shoff != 0 {
        // With more than 0xff00 sections the count is in entry 0: that entry at least.
        let entries = u64::from(shnum.max(1));
        within(
            || "section header table".to_owned(),
            shoff,
            entries * SECTION_HEADER_SIZE,
            size,
        )?;
    }
    Ok(())
}

/// Checks the dynamic array at file bytes `[offset, offset + filesz)` (within the file):
/// a `DT_NULL` end after at least a `DT_STRTAB` and a `DT_SYMTAB` entry, which glibc's
/// loader uses without checking they are there.
fn check_dynamic(file: &File, offset: u64, filesz: u64) -> Result<(), ElfError> {
    let len = filesz.min(MAX_DYNAMIC_BYTES) / DYNAMIC_ENTRY_SIZE * DYNAMIC_ENTRY_SIZE;
    let bad = |why| {
        Err(ElfError::BadDynamic {
            start: offset,
            end: offset + filesz,
            why,
        })
    };
    // At most 1 MiB, within the file (checked by the caller).
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, offset)?;
    let (mut strtab, mut symtab) = (false, false);
    for (index, entry) in bytes.chunks_exact(DYNAMIC_ENTRY_SIZE as usize).enumerate() {
        match u64_at(entry, 0) {
            DT_NULL if index == 0 => return bad("is empty (its first entry is DT_NULL)"),
            DT_NULL if !(strtab && symtab) => {
                return bad("names no string or no symbol table (DT_STRTAB, DT_SYMTAB)");
            }
            DT_NULL => return Ok(()),
            DT_STRTAB => strtab = true,
            DT_SYMTAB => symtab = true,
            _ => {}
        }
    }
    bad("has no DT_NULL end")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 shared object header for this process, with `loads` as
    /// `(p_offset, p_filesz)` PT_LOAD entries right after the header, padded to `size`
    /// bytes.
    fn image(loads: &[(u64, u64)], size: usize) -> Vec<u8> {
        let mut bytes = vec![0u8; size.max(HEADER_SIZE + loads.len() * 56)];
        bytes[..4].copy_from_slice(&ELF_MAGIC);
        bytes[4] = ELFCLASS64;
        bytes[5] = HOST_DATA;
        bytes[6] = 1;
        bytes[16..18].copy_from_slice(&ET_DYN.to_ne_bytes());
        bytes[18..20].copy_from_slice(&HOST_MACHINE.unwrap_or(0).to_ne_bytes());
        bytes[32..40].copy_from_slice(&(HEADER_SIZE as u64).to_ne_bytes());
        bytes[54..56].copy_from_slice(&56u16.to_ne_bytes());
        bytes[56..58].copy_from_slice(&(loads.len() as u16).to_ne_bytes());
        for (i, &(offset, filesz)) in loads.iter().enumerate() {
            let at = HEADER_SIZE + i * 56;
            bytes[at..at + 4].copy_from_slice(&PT_LOAD.to_ne_bytes());
            bytes[at + 8..at + 16].copy_from_slice(&offset.to_ne_bytes());
            bytes[at + 32..at + 40].copy_from_slice(&filesz.to_ne_bytes());
        }
        bytes
    }

    fn check(bytes: &[u8]) -> Result<(), ElfError> {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("libx.so");
        std::fs::write(&path, bytes).expect("write");
        check_shared_object(&path)
    }

    fn message(bytes: &[u8]) -> String {
        check(bytes).expect_err("refused").to_string()
    }

    #[test]
    fn a_whole_image_passes() {
        check(&image(&[(0, 4096), (4096, 100)], 4196)).expect("accepted");
    }

    #[test]
    fn each_header_field_is_checked_with_its_reason() {
        assert_eq!(
            message(b"\x7fELF"),
            "the file is 4 bytes, shorter than an ELF header (64 bytes)"
        );
        assert_eq!(
            message(&[b'#'; 100]),
            "not an ELF file (it starts with [23, 23, 23, 23], not 7f 45 4c 46)"
        );
        let good = image(&[(0, 200)], 200);
        let mut bytes = good.clone();
        bytes[4] = ELFCLASS32;
        assert_eq!(
            message(&bytes),
            "its ELF class is 1 (32-bit), but this process is 64-bit"
        );
        let mut bytes = good.clone();
        bytes[5] = 3 - HOST_DATA;
        assert!(
            message(&bytes).starts_with("its byte order is "),
            "{}",
            message(&bytes)
        );
        let mut bytes = good.clone();
        bytes[16..18].copy_from_slice(&2u16.to_ne_bytes());
        assert_eq!(
            message(&bytes),
            "its ELF type is 2 (an executable), not a shared object (ET_DYN)"
        );
        let mut bytes = good.clone();
        bytes[56..58].copy_from_slice(&0u16.to_ne_bytes());
        assert_eq!(
            message(&bytes),
            "its program header table is unusable: it has no entries"
        );
        let mut bytes = good;
        bytes[54..56].copy_from_slice(&32u16.to_ne_bytes());
        assert_eq!(
            message(&bytes),
            "its program header table is unusable: entries are 32 bytes, not 56"
        );
    }

    #[test]
    fn another_machine_is_named() {
        let Some(host) = HOST_MACHINE else { return };
        let other: u16 = if host == 62 { 183 } else { 62 };
        let mut bytes = image(&[(0, 200)], 200);
        bytes[18..20].copy_from_slice(&other.to_ne_bytes());
        assert_eq!(
            message(&bytes),
            format!(
                "it is built for {} (e_machine {other}), but this process runs on {} (e_machine {host})",
                machine_name(other),
                machine_name(host)
            )
        );
    }

    #[test]
    fn tables_and_segments_past_the_end_are_refused() {
        assert_eq!(
            message(&image(&[(0, 4096), (4096, 100)], 4100)),
            "its PT_LOAD segment of program header 1 (file bytes 4096..4196) extends past the end \
             of the file (4100 bytes): the file is truncated or corrupt"
        );
        // An offset that overflows is reported, not wrapped.
        let text = message(&image(&[(u64::MAX, 2)], 200));
        assert!(text.contains("18446744073709551617"), "{text}");
        let mut bytes = image(&[(0, 200)], 200);
        bytes[32..40].copy_from_slice(&190u64.to_ne_bytes());
        assert!(
            message(&bytes).starts_with("its program header table (file bytes 190..246)"),
            "{}",
            message(&bytes)
        );
        let mut bytes = image(&[(0, 200)], 200);
        bytes[40..48].copy_from_slice(&150u64.to_ne_bytes());
        bytes[60..62].copy_from_slice(&2u16.to_ne_bytes());
        assert!(
            message(&bytes).starts_with("its section header table (file bytes 150..278)"),
            "{}",
            message(&bytes)
        );
    }

    /// `image` with a PT_DYNAMIC header after the PT_LOAD ones, for a dynamic array of
    /// `entries` at file byte `at` (inside the image).
    fn with_dynamic(
        mut bytes: Vec<u8>,
        loads: usize,
        at: usize,
        entries: &[(u64, u64)],
    ) -> Vec<u8> {
        let header = HEADER_SIZE + loads * 56;
        let phnum = (loads + 1) as u16;
        bytes[56..58].copy_from_slice(&phnum.to_ne_bytes());
        bytes[header..header + 4].copy_from_slice(&PT_DYNAMIC.to_ne_bytes());
        bytes[header + 8..header + 16].copy_from_slice(&(at as u64).to_ne_bytes());
        let filesz = (entries.len() as u64).max(1) * 16;
        bytes[header + 32..header + 40].copy_from_slice(&filesz.to_ne_bytes());
        for (i, &(tag, value)) in entries.iter().enumerate() {
            let e = at + i * 16;
            bytes[e..e + 8].copy_from_slice(&tag.to_ne_bytes());
            bytes[e + 8..e + 16].copy_from_slice(&value.to_ne_bytes());
        }
        bytes
    }

    #[test]
    fn a_zero_filled_or_unusable_dynamic_section_is_refused() {
        let base = || image(&[(0, 4096)], 4096);
        let good = [(DT_STRTAB, 1), (DT_SYMTAB, 2), (DT_NULL, 0)];
        check(&with_dynamic(base(), 1, 2048, &good)).expect("accepted");
        // A zero-filled tail: the dynamic array's first entry is DT_NULL.
        assert_eq!(
            message(&with_dynamic(base(), 1, 2048, &[(0, 0), (0, 0), (0, 0)])),
            "its dynamic section (file bytes 2048..2096) is empty (its first entry is \
             DT_NULL): the file is truncated or corrupt"
        );
        assert!(
            message(&with_dynamic(
                base(),
                1,
                2048,
                &[(DT_STRTAB, 1), (DT_NULL, 0)]
            ))
            .contains("names no string or no symbol table"),
        );
        assert!(
            message(&with_dynamic(
                base(),
                1,
                2048,
                &[(DT_STRTAB, 1), (DT_SYMTAB, 2)]
            ))
            .contains("has no DT_NULL end"),
        );
        // A PT_DYNAMIC past the end of the file.
        assert!(
            message(&with_dynamic(base(), 1, 4090, &[]))
                .starts_with("its PT_DYNAMIC segment of program header 1 (file bytes 4090..4106)"),
        );
    }

    #[test]
    fn a_fifo_is_not_opened_for_reading_blocked() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("libfifo.so");
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            check_shared_object(&path),
            Err(ElfError::NotRegular)
        ));
    }
}
