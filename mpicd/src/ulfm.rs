//! Failures as a communicator sees them (ULFM, as Open MPI 5's `MPIX_Comm_*` calls define
//! them): the members known failed, acknowledging them, and the acknowledged ones. A receive
//! from any source on a communicator with a failed member whose failure was not acknowledged
//! fails with [`Error::ProcFailedPending`] and stays pending
//! ([`Request::wait_or_pending`](crate::Request::wait_or_pending)); once acknowledged, it waits
//! for the live members again. A revoked communicator ([`Communicator::revoke`]) runs nothing
//! but these calls, the agreement and shrink.

use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::ulfm_agree::AgreementRun;

impl Communicator {
    /// The members of this communicator (of the remote group of an inter-communicator) that
    /// this process knows failed, in the order it found them (`MPIX_Comm_get_failed`).
    pub fn failed_members(&self) -> Result<Group> {
        let failed = self.shared.with(|e| {
            e.progress();
            Ok(e.failed_members(&self.route))
        })?;
        Ok(Group::from_members(failed))
    }

    /// Acknowledges every failure this process knows of (`MPIX_Comm_failure_ack`): receives
    /// from any source on this communicator no longer fail for them.
    pub fn ack_failures(&self) -> Result<()> {
        self.shared.with(|e| {
            e.ack_failures(&self.route);
            Ok(())
        })
    }

    /// Acknowledges the first `count` failed members, in the order of
    /// [`Communicator::failed_members`] (`MPIX_Comm_ack_failed`); returns how many of this
    /// communicator's failed members are acknowledged now.
    pub fn ack_failed(&self, count: usize) -> Result<usize> {
        self.shared
            .with(|e| Ok(e.ack_first_failures(&self.route, count)))
    }

    /// The members whose failure this communicator acknowledged
    /// (`MPIX_Comm_failure_get_acked`).
    pub fn acked_failures(&self) -> Result<Group> {
        let acked = self.shared.with(|e| Ok(e.acked_members(&self.route)))?;
        Ok(Group::from_members(acked))
    }
}

impl Communicator {
    /// The AND of `flag` over the live members (`MPIX_Comm_agree`), agreed although members
    /// fail (see [`crate::ulfm_agree`] for which failures it survives). Fails with
    /// [`Error::ProcFailed`] when a member failed whose failure this communicator did not
    /// acknowledge, after the agreement (whose flag is then still the agreed one, as in ULFM).
    pub fn agree(&self, flag: u32) -> (u32, Result<()>) {
        match self.prepare_agreement() {
            Ok(run) => run.agree(flag),
            Err(e) => (flag, Err(e)),
        }
    }

    /// [`Communicator::agree`] without waiting (`MPIX_Comm_iagree`): the agreement runs on a
    /// thread of its own; the members start their agreements and shrinks on a communicator in
    /// the same order, as for any collective.
    pub fn iagree(&self, flag: u32) -> Result<PendingAgreement> {
        let run = self.prepare_agreement()?;
        Background::spawn("iagree", move || Ok(run.agree(flag)))
    }

    /// A new communicator of the live members, in their order here (`MPIX_Comm_shrink`):
    /// they agree on the failed members and on a context id, although members fail.
    pub fn shrink(&self) -> Result<Communicator> {
        self.prepare_shrink()?.run()
    }

    /// [`Communicator::shrink`] without waiting (`MPIX_Comm_ishrink`), on a thread of its own.
    pub fn ishrink(&self) -> Result<PendingShrink> {
        let run = self.prepare_shrink()?;
        Background::spawn("ishrink", move || run.run())
    }

    fn prepare_shrink(&self) -> Result<ShrinkRun> {
        Ok(ShrinkRun {
            proposal: crate::newcomm::Proposal::alone(&self.shared)?,
            agreement: self.prepare_agreement()?,
        })
    }
}

/// A shrink ready to run: this process's context proposal and the agreement.
struct ShrinkRun {
    proposal: crate::newcomm::Proposal,
    agreement: AgreementRun,
}

impl ShrinkRun {
    /// The members agree on the failed ones and a context id; the live ones make the new
    /// communicator.
    fn run(self) -> Result<Communicator> {
        let agreed = self.agreement.run(1, self.proposal.value())?;
        self.proposal.assign(agreed.proposal)?;
        let side = self.agreement.side();
        // The members left out are failed here too, even those only another member saw fail
        // (the old communicator's MPIX_Comm_get_failed names every one of them).
        side.shared.with(|e| {
            e.learn_failures(agreed.failed.iter().copied());
            Ok(())
        })?;
        let live: Vec<u32> = side
            .route
            .group
            .members()
            .into_iter()
            .filter(|m| !agreed.failed.contains(m))
            .collect();
        let me = side.world_rank(side.rank)?;
        let rank = live.iter().position(|&m| m == me).unwrap_or(0) as i32;
        Ok(side.with_context(agreed.proposal, Group::from_members(live), rank))
    }
}

impl Communicator {
    /// Revokes this communicator on every process of it (`MPIX_Comm_revoke`; not collective):
    /// from now on, and once each learns of it, every operation on it but the fault-tolerance
    /// calls ([`Communicator::agree`], [`Communicator::shrink`], the acknowledgments) fails
    /// with [`Error::Revoked`], pending receives and collectives included. It is how a process
    /// that found a failure stops the others, wherever they wait, to recover together.
    ///
    /// Not across jobs yet: a communicator with processes of another job (spawned, or
    /// connected through a port) fails with `MPI_ERR_UNSUPPORTED_OPERATION`, since the notice
    /// names members as this job numbers them.
    pub fn revoke(&self) -> Result<()> {
        let members = self.coll.group.members();
        self.shared.with(|e| {
            if members.iter().any(|&m| m >= e.size()) {
                return Err(Error::Io(
                    crate::error::IoError::UnsupportedOperation,
                    "MPIX_Comm_revoke of a communicator with processes of another job".into(),
                ));
            }
            e.revoke(self.route.context, &members)
        })
    }

    /// True once this process knows the communicator revoked (`MPIX_Comm_is_revoked`).
    pub fn is_revoked(&self) -> Result<bool> {
        self.shared.with(|e| {
            e.progress();
            Ok(e.is_revoked(self.route.context))
        })
    }
}

/// ULFM work running on a thread of its own ([`Communicator::iagree`],
/// [`Communicator::ishrink`]): the thread progresses the runtime while the caller goes on.
pub struct Background<T> {
    thread: std::thread::JoinHandle<Result<T>>,
}

/// An agreement started by [`Communicator::iagree`]: its flag and outcome.
pub type PendingAgreement = Background<(u32, Result<()>)>;
/// A shrink started by [`Communicator::ishrink`].
pub type PendingShrink = Background<Communicator>;

impl<T: Send + 'static> Background<T> {
    fn spawn(name: &str, work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<Self> {
        let thread = std::thread::Builder::new()
            .name(format!("mpicd-{name}"))
            .spawn(work)
            .map_err(|e| Error::Transport(format!("cannot start the {name} thread: {e}")))?;
        Ok(Background { thread })
    }

    /// True once the work completed ([`Background::wait`] then returns at once).
    pub fn is_done(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the work's outcome.
    pub fn wait(self) -> Result<T> {
        self.thread
            .join()
            .unwrap_or_else(|_| Err(Error::Transport("a ULFM thread panicked".into())))
    }
}
