//! Zeroed `f32` buffers for data a plan keeps from one execution to the next (packed
//! and transformed constant filters), backed by transparent huge pages where the
//! system allows it.
//!
//! Constant filters are read once per execution, all of them: ResNet-50's are over
//! 100 MB, through 4 KiB pages one address translation per 4 KiB, and in a virtual
//! machine a translation missed in the TLB walks two sets of page tables. With 2 MiB
//! pages a buffer needs 512 times fewer. On Linux a buffer of at least [`HUGE_MIN`]
//! bytes is a mapping of its own starting on a 2 MiB boundary, with
//! `madvise(MADV_HUGEPAGE)` asked before any page is touched, so that the system backs
//! it with huge pages when its transparent huge pages are `always` or `madvise` (the
//! usual default); where they are `never`, or the call fails, it is ordinary memory.
//! `HIPDNN_CPU_HUGE_PAGES=0` (read once per process) turns the request off; smaller
//! buffers, other systems and a failed mapping use the global allocator.

use std::ops::{Deref, DerefMut};

/// Bytes from which a buffer gets a mapping of its own: one huge page.
pub const HUGE_MIN: usize = 2 << 20;

/// An owned, zero-initialized `f32` buffer, aligned to at least 64 bytes.
pub struct KeptBuf {
    store: Store,
    len: usize,
}

enum Store {
    /// From the global allocator, `at` floats in for alignment.
    Heap { data: Vec<f32>, at: usize },
    /// A private anonymous mapping of `bytes` at `base` (2 MiB-aligned), unmapped on
    /// drop.
    #[cfg(target_os = "linux")]
    Mapped { base: *mut f32, bytes: usize },
}

// SAFETY: the mapping is owned by the buffer alone, like a `Vec`'s memory; shared
// references give only `&[f32]`.
unsafe impl Send for KeptBuf {}
// SAFETY: as above.
unsafe impl Sync for KeptBuf {}

impl std::fmt::Debug for KeptBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptBuf")
            .field("len", &self.len)
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

impl KeptBuf {
    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        #[cfg(target_os = "linux")]
        if let Some(b) = Self::mapped(len) {
            return b;
        }
        let data = vec![0f32; len + 16];
        let at = data.as_ptr().align_offset(64).min(16);
        Self {
            store: Store::Heap { data, at },
            len,
        }
    }

    /// Whether the buffer is a mapping of its own (with huge pages asked for).
    pub fn is_mapped(&self) -> bool {
        match self.store {
            Store::Heap { .. } => false,
            #[cfg(target_os = "linux")]
            Store::Mapped { .. } => true,
        }
    }

    /// A 2 MiB-aligned mapping for `len` floats with huge pages asked for, where the
    /// buffer is large enough and the request is not turned off.
    #[cfg(target_os = "linux")]
    fn mapped(len: usize) -> Option<Self> {
        let bytes = len.checked_mul(4)?;
        if bytes < HUGE_MIN || !huge_pages_wanted() {
            return None;
        }
        // Whole pages, with at least one cache line past the end (as the heap
        // form's 16 floats of slack): a read just past the last float stays mapped.
        let bytes = bytes.checked_add(64)?.checked_next_multiple_of(4096)?;
        let span = bytes.checked_add(HUGE_MIN)?;
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let start = raw as usize;
        let base = start.next_multiple_of(HUGE_MIN);
        let (head, tail) = (base - start, start + span - (base + bytes));
        // SAFETY: the head and tail are whole pages of the mapping just made, outside
        // [base, base + bytes), which nothing refers to; munmap of such a range cannot
        // fail but for bad arguments.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((base + bytes) as *mut libc::c_void, tail);
            }
            // Advice only: where it fails (no transparent huge pages in this kernel) the
            // mapping stays ordinary memory.
            libc::madvise(base as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
        Some(Self {
            store: Store::Mapped {
                base: base as *mut f32,
                bytes,
            },
            len,
        })
    }
}

/// Asks the system for transparent huge pages on the whole 2 MiB pages inside the
/// `len` bytes at `ptr` (a plan's workspace, which the caller owns and lends to each
/// execution): `madvise(MADV_HUGEPAGE)`, advice only, which changes no byte and applies
/// to pages first touched after it. Returns whether it was asked: not for a range
/// holding no whole huge page, with `HIPDNN_CPU_HUGE_PAGES=0`, off Linux, or where the
/// call fails (memory that is not private and anonymous, a kernel without
/// transparent huge pages).
///
/// # Safety
/// The range is memory the caller may use as it likes for the duration of the call
/// (nothing else's pages lie inside it).
pub unsafe fn advise_huge_pages(ptr: *mut u8, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        let start = (ptr as usize).next_multiple_of(HUGE_MIN);
        let end = (ptr as usize).saturating_add(len) / HUGE_MIN * HUGE_MIN;
        if end <= start || !huge_pages_wanted() {
            return false;
        }
        // SAFETY: whole pages inside the caller's range (contract); the advice changes
        // how they are backed, not what they hold.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (ptr, len);
        false
    }
}

/// Whether buffers ask for huge pages: unless `HIPDNN_CPU_HUGE_PAGES=0`, read once per
/// process.
#[cfg(target_os = "linux")]
fn huge_pages_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| super::env_switch("HIPDNN_CPU_HUGE_PAGES", || true))
}

impl Deref for KeptBuf {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match &self.store {
            Store::Heap { data, at } => &data[*at..*at + self.len],
            // SAFETY: `len` floats of the mapping, zero-initialized by the system and
            // owned by this buffer.
            #[cfg(target_os = "linux")]
            Store::Mapped { base, .. } => unsafe { std::slice::from_raw_parts(*base, self.len) },
        }
    }
}

impl DerefMut for KeptBuf {
    fn deref_mut(&mut self) -> &mut [f32] {
        match &mut self.store {
            Store::Heap { data, at } => &mut data[*at..*at + self.len],
            // SAFETY: as in `deref`, borrowed mutably through `&mut self`.
            #[cfg(target_os = "linux")]
            Store::Mapped { base, .. } => unsafe {
                std::slice::from_raw_parts_mut(*base, self.len)
            },
        }
    }
}

impl Drop for KeptBuf {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Store::Mapped { base, bytes } = self.store {
            // SAFETY: the mapping made in `mapped`, unmapped once, with no references
            // left (they borrow `self`).
            unsafe { libc::munmap(base.cast(), bytes) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_buffers_are_zeroed_aligned_and_writable() {
        for len in [
            0,
            1,
            17,
            1000,
            HUGE_MIN / 4 - 1,
            HUGE_MIN / 4,
            3 * HUGE_MIN / 4 + 5,
        ] {
            let mut b = KeptBuf::zeroed(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % 64, 0, "len {len}");
            assert!(b.iter().all(|&v| v == 0.0), "len {len}");
            for (i, v) in b.iter_mut().enumerate() {
                *v = i as f32;
            }
            assert!(b.iter().enumerate().all(|(i, &v)| v == i as f32));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn advice_covers_whole_huge_pages_only_and_changes_no_byte() {
        // A workspace-like buffer that is not a mapping of its own, starting 1 MiB
        // past a huge page boundary.
        let mut buf = vec![0u8; 6 * HUGE_MIN];
        let at = buf.as_ptr().align_offset(HUGE_MIN) + HUGE_MIN / 2;
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let p = buf[at..].as_mut_ptr();
        // SAFETY: each range lies inside `buf`, which this test owns.
        unsafe {
            // No whole huge page inside: nothing asked.
            assert!(!advise_huge_pages(p, HUGE_MIN));
            assert!(!advise_huge_pages(p, HUGE_MIN + HUGE_MIN / 2 - 1));
            assert!(!advise_huge_pages(std::ptr::null_mut(), 0));
            // One or more whole pages: asked where the system has transparent huge
            // pages and they are wanted.
            let supported = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
            let asked = advise_huge_pages(p, 4 * HUGE_MIN);
            assert_eq!(asked, supported && huge_pages_wanted());
        }
        assert!(buf.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_buffers_are_mappings_on_huge_page_boundaries() {
        let small = KeptBuf::zeroed(HUGE_MIN / 4 - 1);
        assert!(!small.is_mapped());
        let large = KeptBuf::zeroed(HUGE_MIN / 4 + 1);
        // With `HIPDNN_CPU_HUGE_PAGES=0` every buffer is the heap form.
        assert_eq!(large.is_mapped(), huge_pages_wanted());
        if large.is_mapped() {
            assert_eq!(large.as_ptr() as usize % HUGE_MIN, 0);
        }
        // Made and dropped again: each a fresh mapping of zeros.
        for _ in 0..50 {
            let b = KeptBuf::zeroed(HUGE_MIN / 2);
            assert_eq!(b[b.len() - 1], 0.0);
        }
    }
}
