//! Groups named across jobs, for [`crate::Communicator::intercomm_create`]: its leaders swap
//! their groups' members, which are world ranks while both groups live in one job (as
//! before), and descriptors ([`ProcDesc`](super::procs::ProcDesc)) as soon as a process of another job is involved
//! (the other leader, or a member): the receiver registers them, and the members then learn
//! their tag sources ([`crate::Communicator::learn_sources`]).

use crate::dynamic::procs::{decode_table, encode_table};
use crate::engine::Shared;
use crate::error::Result;
use std::sync::Arc;

/// Members as world ranks.
const RANKS: u8 = 0;
/// Members as descriptors.
const DESCRIPTORS: u8 = 1;

/// True if `id` names a process of another job.
pub(crate) fn is_foreign(shared: &Arc<Shared>, id: u32) -> Result<bool> {
    shared.with(|e| Ok(e.is_foreign(id)))
}

/// `members` (process ids) for a process that may not share this one's ids: as world ranks
/// unless `descriptors` or one of them is of another job.
pub(crate) fn encode_members(
    shared: &Arc<Shared>,
    members: &[u32],
    descriptors: bool,
) -> Result<Vec<u8>> {
    shared.with(|e| {
        let cross = descriptors || members.iter().any(|&m| e.is_foreign(m));
        if !cross {
            let mut out = vec![RANKS];
            out.extend(members.iter().flat_map(|m| m.to_le_bytes()));
            return Ok(out);
        }
        let table = members
            .iter()
            .map(|&m| e.desc_of(m))
            .collect::<Result<Vec<_>>>()?;
        let mut out = vec![DESCRIPTORS];
        encode_table(&table, &mut out);
        Ok(out)
    })
}

/// Reads what [`encode_members`] wrote: the members' ids here (registering processes met
/// now), and whether they came as descriptors.
pub(crate) fn decode_members(shared: &Arc<Shared>, buf: &[u8]) -> Result<(Vec<u32>, bool)> {
    match buf.split_first() {
        Some((&RANKS, rest)) if rest.len() % 4 == 0 => Ok((
            rest.chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
            false,
        )),
        Some((&DESCRIPTORS, mut rest)) => {
            let table = decode_table(&mut rest)?;
            let ids = shared.with(|e| table.iter().map(|d| e.register(d)).collect())?;
            Ok((ids, true))
        }
        _ => Err(crate::Error::Transport(
            "malformed group in an inter-communicator agreement".into(),
        )),
    }
}
