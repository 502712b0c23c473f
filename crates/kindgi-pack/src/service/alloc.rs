//! Keeps the allocator from holding on to large request buffers. glibc's malloc raises its
//! mmap threshold to the size of each large block freed (up to 32 MiB): after one 10 MiB body,
//! later bodies come from the heap, whose holes small allocations then split, so 32 bodies in
//! turn left ~350 MiB resident although the budgets let only ~6 exist at once (measured with
//! the fixture: 96 MiB with the threshold fixed). Setting the threshold explicitly turns that
//! adjustment off: blocks of 128 KiB or more are mapped and unmapped on their own.

/// Fixes glibc's mmap threshold at its default (128 KiB), unless the user set one
/// (`MALLOC_MMAP_THRESHOLD_`). Elsewhere (musl, macOS, other allocators) it does nothing.
pub(crate) fn keep_large_blocks_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        glibc::set_mmap_threshold(128 * 1024);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
mod glibc {
    use std::ffi::c_int;

    /// `M_MMAP_THRESHOLD` in glibc's `<malloc.h>`.
    const M_MMAP_THRESHOLD: c_int = -3;

    unsafe extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }

    pub(super) fn set_mmap_threshold(bytes: c_int) {
        // SAFETY: `mallopt` only changes malloc's tuning; it is thread-safe in glibc and
        // takes plain integers.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, bytes);
        }
    }
}
