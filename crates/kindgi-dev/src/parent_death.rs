//! The pack service dies with `kindgi dev`, even when `kindgi dev` itself is killed with
//! SIGKILL and can stop nothing.
//!
//! On Linux the child asks the kernel, between `fork` and `exec`, for SIGKILL when its parent
//! dies (`prctl(PR_SET_PDEATHSIG)`), then checks that the parent is still the one that forked
//! it: a parent that died before the `prctl` would never send the signal (the race the man
//! page warns about), so the child exits at once instead of starting orphaned. SIGKILL rather
//! than SIGTERM: with its caller gone nobody waits for the service's answers, so there is
//! nothing to drain.
//!
//! The kernel sends the signal when the *thread* that forked the child exits. The supervisor
//! spawns children from tokio worker threads (or the thread that runs the runtime), which
//! live as long as `kindgi dev`, never from short-lived blocking-pool threads.
//!
//! Elsewhere there is no such kernel feature, and a liveness check would need the pack
//! service to watch something of ours (a pipe's end of file, say); the official services do
//! not, so on other systems a killed `kindgi dev` leaves its service running (docs/dev.md).

use tokio::process::Command;

/// Arranges for the child `cmd` spawns to be killed when this process dies (Linux).
pub fn die_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    linux::die_with_parent(cmd);
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

#[cfg(target_os = "linux")]
mod linux {
    use tokio::process::Command;

    #[allow(unsafe_code)]
    pub(super) fn die_with_parent(cmd: &mut Command) {
        let parent = std::process::id();
        // SAFETY: the closure runs in the forked child before `exec`, where only
        // async-signal-safe calls are allowed: it makes two system calls (`prctl`, `getppid`)
        // and builds an `io::Error` from a raw OS error code (no allocation, no locks).
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent died between fork and prctl: do not start orphaned.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
}
