//! The signals that end mm: SIGINT (Ctrl-C), SIGTERM and SIGHUP, exiting 130, 143 and 129
//! (SPEC §8), and every other signal whose default action would end the process without a word
//! (SIGQUIT from Ctrl-\\, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO,
//! SIGPWR, SIGSTKFLT and the real-time signals), exiting 128 + its number as a shell reports it
//! (131 for SIGQUIT). Not handled: SIGKILL and SIGSTOP (they cannot be), SIGPIPE (ignored by
//! Rust's runtime), and the signals of a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
//! SIGSYS, SIGABRT): a handler that returns from a real fault would run into it again.
//!
//! However mm ends, the running tool's process group is killed first. mm-core kills it in two
//! ways, and this module relies on both — never on `std::process::exit`, which would skip the
//! second:
//! - the turn's [`CancellationToken`]: a running process SIGKILLs its group as soon as the token
//!   is cancelled, and the turn ends as `StopReason::Cancelled`;
//! - the process group guard's drop: dropping a future that runs a tool kills the tool's group.
//!
//! So a signal cancels the running turn, and mm exits with that signal's code once the turn has
//! ended ([`Watch::end_turn`]). [`until_abandoned`] resolves instead — and `main` drops the whole
//! run, running every guard on the way — when mm must end at once: on a second signal, on a
//! signal with no turn to cancel (setup, the prompt, reading `-p -`), or when a cancelled turn
//! has not ended within [`ENDING_GRACE`] (a tool whose output pipe a detached process holds).
//! A consent question does not hold a turn: the pipeline drops it when the turn is cancelled.
//! In interactive mode SIGINT only cancels the running turn; at the prompt and in a dialog the
//! line editor reads Ctrl-C as a key (interactive/input.rs: twice at the prompt quits, as does
//! Ctrl-D).

use std::future::poll_fn;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

use nix::libc;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// How long a cancelled turn may take to end once mm is ending. Ending normally takes
/// milliseconds (the group is killed at once); this bounds a turn stuck where cancellation is
/// not seen, such as a tool's output pipe held open by a process that left its group.
const ENDING_GRACE: Duration = Duration::from_secs(3);

/// A signal mm handles, by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal(i32);

impl Signal {
    /// SIGINT: Ctrl-C.
    pub const INTERRUPT: Self = Self(libc::SIGINT);

    /// The exit code of mm ended by this signal: 128 + its number, as a shell reports it
    /// (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT).
    pub fn exit_code(self) -> u8 {
        u8::try_from(128 + self.0).unwrap_or(u8::MAX)
    }
}

/// The signals that end mm (see the module's documentation), in the order they are installed.
fn ending() -> Vec<i32> {
    let mut numbers = vec![
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGIO,
        libc::SIGPWR,
        libc::SIGSTKFLT,
    ];
    numbers.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    numbers
}

/// The handlers of the ending signals. Install them before anything can start a tool: from then
/// on these signals no longer end the process by themselves, and only this module decides.
pub struct Signals {
    handlers: Vec<(Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Must be called inside the Tokio runtime.
    pub fn install() -> io::Result<Self> {
        let handlers = ending()
            .into_iter()
            .map(|n| Ok((Signal(n), signal(SignalKind::from_raw(n))?)))
            .collect::<io::Result<_>>()?;
        Ok(Self { handlers })
    }

    async fn recv(&mut self) -> Signal {
        let received = poll_fn(|cx| {
            let mut open = false;
            for (signal, handler) in &mut self.handlers {
                match handler.poll_recv(cx) {
                    Poll::Ready(Some(())) => return Poll::Ready(Some(*signal)),
                    Poll::Ready(None) => {}
                    Poll::Pending => open = true,
                }
            }
            // Every stream ended: the runtime is shutting down, no signal will come any more.
            if open {
                Poll::Pending
            } else {
                Poll::Ready(None)
            }
        })
        .await;
        match received {
            Some(signal) => signal,
            None => std::future::pending().await,
        }
    }
}

/// What the signal watcher shares with the run: the turn to cancel, and the signal mm is
/// ending with. Cheap to clone.
#[derive(Clone, Default)]
pub struct Watch(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    turn: Turn,
    /// The first signal that ends mm; its code is mm's exit code.
    ending: Option<Signal>,
    /// Interactive mode: SIGINT cancels the running turn and mm goes on.
    interactive: bool,
}

#[derive(Default)]
enum Turn {
    #[default]
    Idle,
    Running(CancellationToken),
    /// Cancelled by a signal and still ending.
    Cancelled,
}

/// What a signal leads to.
enum Next {
    /// The turn was cancelled (or there was none), and mm goes on.
    GoOn,
    /// The turn was cancelled; mm ends with this signal's code once the turn has.
    EndAfterTurn(Signal),
    /// mm ends now.
    EndNow(Signal),
}

impl Watch {
    /// Interactive mode: SIGINT cancels the running turn only.
    pub fn set_interactive(&self) {
        self.lock().interactive = true;
    }

    /// Starts a turn: its token is cancelled by the next signal.
    pub fn start_turn(&self) -> CancellationToken {
        let cancel = CancellationToken::new();
        self.lock().turn = Turn::Running(cancel.clone());
        cancel
    }

    /// Ends the turn; returns the signal mm must now exit with, if one came.
    pub fn end_turn(&self) -> Option<Signal> {
        let mut state = self.lock();
        state.turn = Turn::Idle;
        state.ending
    }

    fn receive(&self, signal: Signal) -> Next {
        let mut state = self.lock();
        let goes_on = state.interactive && signal == Signal::INTERRUPT;
        if let Turn::Running(cancel) = &state.turn {
            cancel.cancel();
            state.turn = Turn::Cancelled;
            if goes_on {
                return Next::GoOn;
            }
            return Next::EndAfterTurn(*state.ending.get_or_insert(signal));
        }
        if goes_on && matches!(state.turn, Turn::Idle) {
            return Next::GoOn;
        }
        Next::EndNow(*state.ending.get_or_insert(signal))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Handles signals as they come; resolves, with the signal whose code mm exits with, once mm
/// must end without waiting for the run (see the module's documentation). The caller then drops
/// the run, which kills the running tool's group.
pub async fn until_abandoned(mut signals: Signals, watch: Watch) -> Signal {
    loop {
        match watch.receive(signals.recv().await) {
            Next::GoOn => {}
            Next::EndNow(signal) => return signal,
            Next::EndAfterTurn(signal) => {
                // The turn normally ends first, and the run with it: this is then never polled
                // again.
                tokio::select! {
                    _ = signals.recv() => {}
                    () = tokio::time::sleep(ENDING_GRACE) => {}
                }
                return signal;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TERMINATE: Signal = Signal(libc::SIGTERM);
    const HANGUP: Signal = Signal(libc::SIGHUP);

    #[test]
    fn exit_codes_are_128_plus_the_number() {
        assert_eq!(Signal::INTERRUPT.exit_code(), crate::exit::INTERRUPTED);
        assert_eq!(TERMINATE.exit_code(), crate::exit::TERMINATED);
        assert_eq!(HANGUP.exit_code(), crate::exit::HANGUP);
        assert_eq!(Signal(libc::SIGQUIT).exit_code(), 131);
        assert_eq!(Signal(libc::SIGRTMAX()).exit_code(), 192);
    }

    fn ends(next: Next) -> Option<(Signal, bool)> {
        match next {
            Next::GoOn => None,
            Next::EndAfterTurn(signal) => Some((signal, false)),
            Next::EndNow(signal) => Some((signal, true)),
        }
    }

    #[test]
    fn print_mode_any_signal_cancels_the_turn_and_a_second_ends_mm_with_the_first_code() {
        let watch = Watch::default();
        let cancel = watch.start_turn();
        let first = ends(watch.receive(TERMINATE));
        assert_eq!(first, Some((TERMINATE, false)));
        assert!(cancel.is_cancelled());
        let second = ends(watch.receive(Signal::INTERRUPT));
        assert_eq!(second, Some((TERMINATE, true)));
        assert_eq!(watch.end_turn(), Some(TERMINATE));
    }

    #[test]
    fn with_no_turn_a_signal_ends_mm_at_once() {
        for signal in [Signal::INTERRUPT, TERMINATE, HANGUP] {
            let watch = Watch::default();
            assert_eq!(ends(watch.receive(signal)), Some((signal, true)));
        }
    }

    #[test]
    fn interactive_interrupt_cancels_the_turn_only_and_is_ignored_at_the_prompt() {
        let watch = Watch::default();
        watch.set_interactive();
        let cancel = watch.start_turn();
        assert_eq!(ends(watch.receive(Signal::INTERRUPT)), None);
        assert!(cancel.is_cancelled());
        assert_eq!(watch.end_turn(), None);
        assert_eq!(ends(watch.receive(Signal::INTERRUPT)), None);

        // A second Ctrl-C while the cancelled turn is still ending ends mm.
        watch.start_turn();
        assert_eq!(ends(watch.receive(Signal::INTERRUPT)), None);
        assert_eq!(
            ends(watch.receive(Signal::INTERRUPT)),
            Some((Signal::INTERRUPT, true))
        );
    }

    #[test]
    fn interactive_terminate_and_hangup_end_mm_after_the_turn() {
        for signal in [TERMINATE, HANGUP] {
            let watch = Watch::default();
            watch.set_interactive();
            let cancel = watch.start_turn();
            assert_eq!(ends(watch.receive(signal)), Some((signal, false)));
            assert!(cancel.is_cancelled());
            assert_eq!(watch.end_turn(), Some(signal));
            // Ctrl-C, then SIGTERM: mm ends with SIGTERM's code.
            let watch = Watch::default();
            watch.set_interactive();
            watch.start_turn();
            assert_eq!(ends(watch.receive(Signal::INTERRUPT)), None);
            assert_eq!(ends(watch.receive(signal)), Some((signal, true)));
        }
    }
}
