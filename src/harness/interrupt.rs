//! Stopping a campaign early without losing it. Ctrl-C (SIGINT), SIGTERM
//! (what `timeout`, CI runners and Kubernetes send) and SIGHUP ask the
//! running campaign to stop after the case in flight; it then writes the
//! report of the cases that finished and exits with `128 + signal`, as a
//! shell reports a process the signal ended. A second signal ends the
//! process at once.
//!
//! The handler only stores the signal number (all a signal handler may
//! safely do); campaigns poll [`requested`] between cases and while they
//! wait for a backend.

use std::sync::atomic::{AtomicI32, Ordering};

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
        // The second signal: the user means it. `_exit` is async-signal-safe.
        unsafe { libc::_exit(128 + signal) }
    }
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP. Campaign commands
/// call it first; other commands keep the default (immediate) behaviour.
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: `on_signal` only touches an atomic and calls `_exit`, both
        // async-signal-safe; the struct is fully initialised before use.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The signal that asked the campaign to stop, if one did.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The exit status of a campaign stopped by `signal`.
pub fn exit_status(signal: i32) -> i32 {
    128 + signal
}

/// The signal's name for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
