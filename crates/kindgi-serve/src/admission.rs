//! Connection caps: how many connections are open, in all and per IP address. The accept
//! loop asks [`Admission::admit`] for a [`Slot`]; the connection's task holds it and gives
//! it back when it ends, however it ends.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Open connections, counted against the caps.
#[derive(Debug)]
pub(crate) struct Admission {
    max: usize,
    max_per_ip: usize,
    open: AtomicUsize,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Global,
    PerIp,
}

impl Admission {
    pub(crate) fn new(max: usize, max_per_ip: usize) -> Arc<Admission> {
        Arc::new(Admission {
            max,
            max_per_ip,
            open: AtomicUsize::new(0),
            per_ip: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for a connection from `ip`, or why not.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Refusal> {
        let ip = ip.to_canonical();
        // Only the accept loop admits, so the check and the increment cannot race with
        // another admission; a concurrent release only makes room.
        if self.open.load(Ordering::Acquire) >= self.max {
            return Err(Refusal::Global);
        }
        {
            let mut per_ip = self.per_ip.lock().unwrap_or_else(PoisonError::into_inner);
            let count = per_ip.entry(ip).or_insert(0);
            if *count >= self.max_per_ip {
                return Err(Refusal::PerIp);
            }
            *count += 1;
        }
        self.open.fetch_add(1, Ordering::AcqRel);
        Ok(Slot {
            admission: self.clone(),
            ip,
        })
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

/// One admitted connection's place under the caps.
#[derive(Debug)]
pub(crate) struct Slot {
    admission: Arc<Admission>,
    ip: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut per_ip = self
            .admission
            .per_ip
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = per_ip.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                per_ip.remove(&self.ip);
            }
        }
        drop(per_ip);
        self.admission.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_and_release() {
        let a = Admission::new(3, 2);
        let one: IpAddr = [127, 0, 0, 1].into();
        let two: IpAddr = [127, 0, 0, 2].into();
        let s1 = a.admit(one).ok();
        let s2 = a.admit(one).ok();
        assert_eq!(a.admit(one).err(), Some(Refusal::PerIp));
        let s3 = a.admit(two).ok();
        assert_eq!(a.admit(two).err(), Some(Refusal::Global));
        drop(s1);
        assert!(a.admit(one).is_ok());
        drop((s2, s3));
        assert_eq!(a.open(), 0);
    }
}
