//! Failures as a communicator sees them (ULFM, as Open MPI 5's `MPIX_Comm_*` calls define
//! them): the members known failed, acknowledging them, and the acknowledged ones. A receive
//! from any source on a communicator with a failed member whose failure was not acknowledged
//! fails with [`Error::ProcFailedPending`](crate::Error::ProcFailedPending) and stays pending
//! ([`Request::wait_or_pending`](crate::Request::wait_or_pending)); once acknowledged, it waits
//! for the live members again.

use crate::comm::Communicator;
use crate::error::Result;
use crate::group::Group;

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
