//! Inter-communicators: [`Communicator::intercomm_create`] joins two disjoint groups through
//! their leaders, [`Communicator::merge`] makes one intra-communicator of both groups, and the
//! dup, split and create of an inter-communicator ([`crate::newcomm`] hands them here) make new
//! inter-communicators.
//!
//! A new communicator needs a context id unused by every process of both groups (see
//! [`crate::newcomm`] for how ids are agreed). Within one group the members can agree through
//! their communicator; across the groups only the leaders talk. So every call here gathers each
//! member's entry at its group's leader (rank 0 of the group, or the local leader of
//! intercomm_create), the two leaders swap their groups' tables, and each leader hands both
//! tables to its members ([`Communicator::swap_tables`]), who all compute the same result.
//! Inside an inter-communicator this runs on its third context (its "bridge": the local group
//! then the remote group, by point-to-point), which nothing else on an inter-communicator uses
//! (`create_group` is for intra-communicators only).

use crate::collective::allgather_bytes;
use crate::comm::{Communicator, Sides};
use crate::dynamic::bridge;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::newcomm::Proposal;
use crate::request::scope;
use crate::route::SUBGROUP_OFFSET;
use crate::UNDEFINED;
use std::sync::Arc;

/// The tag of every message on a bridge: the calls on one inter-communicator are collective,
/// so every process makes them in the same order, and messages between two processes match in
/// order.
const BRIDGE_TAG: i32 = 0;

/// Each group's entries, indexed by rank in the group.
struct Tables {
    local: Vec<Vec<u8>>,
    remote: Vec<Vec<u8>>,
}

impl Tables {
    /// The largest context id named at the start of any entry.
    fn agreed_context(&self) -> Result<u32> {
        self.largest(0)
    }

    /// The largest number at byte `at` of any entry.
    fn largest(&self, at: usize) -> Result<u32> {
        let mut largest = 0;
        for entry in self.local.iter().chain(&self.remote) {
            largest = largest.max(read_u32(entry, at)?);
        }
        Ok(largest)
    }
}

impl Communicator {
    /// An inter-communicator between this communicator's group and another disjoint group
    /// (`MPI_Intercomm_create`; collective over both groups). Each group names a leader by its
    /// rank here (`local_leader`, the same on every member); the leaders reach each other on
    /// `peer` (needed at the local leader only), where the other leader has rank
    /// `remote_leader`, with messages of tag `tag`. The groups may be of different jobs
    /// (dynamic processes): the leaders then swap descriptors, see [`crate::dynamic`].
    pub fn intercomm_create(
        &self,
        local_leader: i32,
        peer: Option<&Communicator>,
        remote_leader: i32,
        tag: i32,
    ) -> Result<Communicator> {
        self.require_intra("intercomm_create's local communicator")?;
        if !(0..self.size()).contains(&local_leader) {
            return Err(Error::InvalidRank {
                rank: local_leader,
                size: self.size(),
            });
        }
        let mine = Proposal::new(&self.shared)?;
        let mut local_max = 0;
        for entry in allgather_bytes(self, &mine.value().to_le_bytes())? {
            local_max = local_max.max(read_u32(&entry, 0)?);
        }
        // The leader meets the other leader, then tells its group what came of it.
        let leader = self.rank == local_leader;
        let met = match leader {
            true => self.meet_leader(peer, remote_leader, tag, local_max),
            false => Ok((0, Vec::new(), false)),
        };
        let told = match (&met, leader) {
            (Ok((agreed, remote, cross)), true) => {
                let mut told = vec![1u8];
                told.extend_from_slice(&agreed.to_le_bytes());
                told.push(*cross as u8);
                told.extend(bridge::encode_members(&self.shared, remote, *cross)?);
                told
            }
            (Err(_), true) => vec![0u8],
            (_, false) => Vec::new(),
        };
        let all = allgather_bytes(self, &told)?;
        let met = met?;
        let told = &all[local_leader as usize];
        if told.first() != Some(&1) {
            return Err(Error::InvalidArgument(
                "intercomm_create: the local leader could not join the remote group".into(),
            ));
        }
        let agreed = read_u32(told, 1)?;
        let cross = told.get(5) == Some(&1);
        let (remote, _) = bridge::decode_members(&self.shared, told.get(6..).unwrap_or(&[]))?;
        if cross {
            // Processes of two jobs: each learns the ids the other side knows it by.
            let swap_with_leader = |ours: &[u8]| -> Result<Vec<u8>> {
                let peer = peer.ok_or(Error::InvalidCommunicator)?;
                scope(|s| {
                    let sent = peer.isend(s, ours, remote_leader, tag)?;
                    let theirs = recv_bytes(peer, remote_leader, tag);
                    sent.wait()?;
                    theirs
                })
            };
            let swap = (leader && met.2).then_some(swap_with_leader);
            self.learn_sources(local_leader, &remote, swap)?;
        }
        let leaders = (local_leader, peer, remote_leader, tag);
        let agreed = mine.settle(agreed, |v| self.max_across_leaders(leaders, v))?;
        Ok(Communicator::new_inter(
            Arc::clone(&self.shared),
            agreed,
            self.group(),
            Group::from_members(remote),
            self.rank,
        ))
    }

    /// The largest of the `values` of every member of both groups of an
    /// [`Communicator::intercomm_create`], element by element (its agreement's rounds): this
    /// group's by an allreduce, then the leaders swap theirs on the peer communicator under
    /// the call's tag, and this group's leader tells the others.
    fn max_across_leaders(
        &self,
        (local_leader, peer, remote_leader, tag): (i32, Option<&Communicator>, i32, i32),
        values: &[u32],
    ) -> Result<Vec<u32>> {
        let mut ours = self.collective_max(values)?;
        let swapped = match (self.rank == local_leader, peer) {
            (false, _) => Ok(Vec::new()),
            (true, None) => Err(Error::InvalidCommunicator),
            (true, Some(peer)) => {
                let mine: Vec<u8> = ours.iter().flat_map(|v| v.to_le_bytes()).collect();
                scope(|s| {
                    let sent = peer.isend(s, &mine, remote_leader, tag)?;
                    let theirs = recv_bytes(peer, remote_leader, tag);
                    sent.wait()?;
                    theirs
                })
            }
        };
        // The leader's word to its group: 1 and the largest values, or 0 if the swap failed.
        let told = match (&swapped, self.rank == local_leader) {
            (Ok(theirs), true) => {
                for (i, o) in ours.iter_mut().enumerate() {
                    *o = (*o).max(read_u32(theirs, 4 * i)?);
                }
                std::iter::once(1u8)
                    .chain(ours.iter().flat_map(|v| v.to_le_bytes()))
                    .collect()
            }
            (Err(_), true) => vec![0u8],
            (_, false) => Vec::new(),
        };
        let all = allgather_bytes(self, &told)?;
        swapped?;
        let told = &all[local_leader as usize];
        if told.first() != Some(&1) {
            return Err(Error::InvalidArgument(
                "intercomm_create: the leaders could not agree on a context id".into(),
            ));
        }
        (0..values.len())
            .map(|i| read_u32(told, 1 + 4 * i))
            .collect()
    }

    /// The local leader's part of [`Communicator::intercomm_create`]: swaps (largest context
    /// id, members) with the remote leader on `peer`; the agreed context id, the remote
    /// group's members, and whether the groups involve processes of two jobs (then members
    /// travelled as descriptors).
    fn meet_leader(
        &self,
        peer: Option<&Communicator>,
        remote_leader: i32,
        tag: i32,
        local_max: u32,
    ) -> Result<(u32, Vec<u32>, bool)> {
        let peer = peer.ok_or_else(|| {
            Error::InvalidArgument(
                "intercomm_create: the local leader needs a peer communicator".into(),
            )
        })?;
        let other = peer.world_rank(remote_leader)?;
        if self.group().contains(other) {
            return Err(Error::InvalidArgument(format!(
                "intercomm_create: the remote leader (rank {remote_leader} of the peer \
                 communicator) is in the local group"
            )));
        }
        let mut mine = local_max.to_le_bytes().to_vec();
        let other_job = bridge::is_foreign(&self.shared, other)?;
        let members = self.group().members();
        mine.extend(bridge::encode_members(&self.shared, &members, other_job)?);
        let theirs = scope(|s| {
            let sent = peer.isend(s, &mine, remote_leader, tag)?;
            let theirs = recv_bytes(peer, remote_leader, tag);
            sent.wait()?;
            theirs
        })?;
        let (remote, theirs_cross) =
            bridge::decode_members(&self.shared, theirs.get(4..).unwrap_or(&[]))?;
        let mine_cross = mine.get(4) == Some(&1);
        let local = self.group();
        if remote.is_empty() || remote.iter().any(|w| local.contains(*w)) {
            return Err(Error::InvalidGroup(
                "the two groups of an inter-communicator must be disjoint and not empty".into(),
            ));
        }
        Ok((
            local_max.max(read_u32(&theirs, 0)?),
            remote,
            mine_cross || theirs_cross,
        ))
    }

    /// One intra-communicator of both groups (`MPI_Intercomm_merge`; collective over both):
    /// the group whose members pass `high` false comes first; if both groups pass the same,
    /// the group whose rank 0 has the lower world rank does (of two jobs, the lower
    /// (namespace, rank)). Every member of a group passes the same `high`.
    pub fn merge(&self, high: bool) -> Result<Communicator> {
        let Sides::Inter { local } = &self.sides else {
            return Err(Error::CommunicatorKind(
                "merge needs an inter-communicator".into(),
            ));
        };
        let proposal = Proposal::new(&self.shared)?;
        let mut mine = proposal.value().to_le_bytes().to_vec();
        mine.push(high as u8);
        let t = self.swap_tables(&mine)?;
        let agreed = proposal.settle(t.agreed_context()?, |v| self.inter_max(v))?;
        let flag = |table: &[Vec<u8>]| table.first().and_then(|e| e.get(4)).copied();
        let (mine_high, theirs_high) = (flag(&t.local), flag(&t.remote));
        let remote = &self.route.group;
        let local_first = match mine_high != theirs_high {
            true => mine_high < theirs_high,
            false => {
                let (a, b) = (local.world_rank(0)?, remote.world_rank(0)?);
                self.shared.with(|e| Ok(e.proc_key(a) < e.proc_key(b)))?
            }
        };
        let (mut members, rank) = match local_first {
            true => (local.members(), self.rank),
            false => (remote.members(), remote.size() + self.rank),
        };
        members.extend(match local_first {
            true => remote.members(),
            false => local.members(),
        });
        Ok(Communicator::new(
            Arc::clone(&self.shared),
            agreed,
            Group::from_members(members),
            rank,
        ))
    }

    /// The largest of the members' `values` in both groups, element by element, on every
    /// member (every member passes as many values).
    fn inter_max(&self, values: &[u32]) -> Result<Vec<u32>> {
        let mine: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let t = self.swap_tables(&mine)?;
        (0..values.len()).map(|i| t.largest(4 * i)).collect()
    }

    /// [`Communicator::dup`] of an inter-communicator: the same groups on a new context.
    pub(crate) fn inter_dup(&self) -> Result<Communicator> {
        let proposal = Proposal::new(&self.shared)?;
        let t = self.swap_tables(&proposal.value().to_le_bytes())?;
        let agreed = proposal.settle(t.agreed_context()?, |v| self.inter_max(v))?;
        Ok(self.inter_on(agreed, self.group(), self.remote_members(), self.rank))
    }

    /// [`Communicator::split`] of an inter-communicator: the members of each group with the
    /// same color, ordered by key then rank, joined to those of the other group with that
    /// color; `None` for [`UNDEFINED`] or a color the other group does not have.
    pub(crate) fn inter_split(&self, color: i32, key: i32) -> Result<Option<Communicator>> {
        let proposal = Proposal::new(&self.shared)?;
        let mut mine = proposal.value().to_le_bytes().to_vec();
        mine.extend_from_slice(&color.to_le_bytes());
        mine.extend_from_slice(&key.to_le_bytes());
        let t = self.swap_tables(&mine)?;
        let agreed = proposal.settle(t.agreed_context()?, |v| self.inter_max(v))?;
        if color == UNDEFINED {
            return Ok(None);
        }
        let local = split_members(&t.local, &self.group(), color)?;
        let remote = split_members(&t.remote, &self.remote_members(), color)?;
        let me = self.group().world_rank(self.rank)?;
        let rank = local.comm_rank(me).unwrap_or(0);
        Ok((!remote.is_empty()).then(|| self.inter_on(agreed, local, remote, rank)))
    }

    /// [`Communicator::create`] of an inter-communicator: each group passes the same subgroup
    /// of its own group; the new inter-communicator joins the two subgroups. `None` for a
    /// process outside its group, or if either group is empty.
    pub(crate) fn inter_create(&self, group: &Group) -> Result<Option<Communicator>> {
        let proposal = Proposal::new(&self.shared)?;
        let mut mine = proposal.value().to_le_bytes().to_vec();
        if self.rank == 0 {
            // As ranks in the local group: the other group's processes may be of another job,
            // which names processes by other ids.
            let local = self.group();
            let ranks = group
                .members()
                .into_iter()
                .map(|w| local.comm_rank(w).map_or(u32::MAX, |r| r as u32));
            mine.extend(ranks.flat_map(|r| r.to_le_bytes()));
        }
        let t = self.swap_tables(&mine)?;
        let agreed = proposal.settle(t.agreed_context()?, |v| self.inter_max(v))?;
        if !group.is_subset_of(&self.group()) {
            return Err(Error::InvalidGroup(format!(
                "a group of {} processes that is not a subgroup of the local group's {}",
                group.size(),
                self.size()
            )));
        }
        let chosen = |table: &[Vec<u8>], of: &Group| -> Result<Group> {
            let leader = table.first().map_or(&[][..], |e| e.get(4..).unwrap_or(&[]));
            let ranks = read_members(leader)?;
            let members = ranks.iter().map(|&r| of.world_rank(r as i32));
            Ok(Group::from_members(members.collect::<Result<_>>()?))
        };
        let local = chosen(&t.local, &self.group())?;
        let remote = chosen(&t.remote, &self.remote_members())?;
        let me = self.group().world_rank(self.rank)?;
        Ok(match (local.comm_rank(me), remote.is_empty()) {
            (Some(rank), false) => Some(self.inter_on(agreed, local, remote, rank)),
            _ => None,
        })
    }

    /// An inter-communicator on the same engine.
    fn inter_on(&self, context: u32, local: Group, remote: Group, rank: i32) -> Communicator {
        Communicator::new_inter(Arc::clone(&self.shared), context, local, remote, rank)
    }

    fn remote_members(&self) -> Group {
        (*self.route.group).clone()
    }

    /// Every member's `mine` in both groups' tables, on every member of an inter-communicator:
    /// gathered at each group's rank 0, swapped between those two, handed to every member.
    fn swap_tables(&self, mine: &[u8]) -> Result<Tables> {
        // The bridge: this inter-communicator's third context, the local members then the
        // remote ones (point-to-point only: its collective context is not this one's).
        let bridge = Communicator::new(
            Arc::clone(&self.shared),
            self.route.context + SUBGROUP_OFFSET,
            (*self.coll.group).clone(),
            self.rank,
        );
        let size = self.size();
        if self.rank != 0 {
            bridge.send(mine, 0, BRIDGE_TAG)?;
            let both = decode(&recv_bytes(&bridge, 0, BRIDGE_TAG)?)?;
            let [local, remote] = &both[..] else {
                return Err(malformed());
            };
            return Ok(Tables {
                local: decode(local)?,
                remote: decode(remote)?,
            });
        }
        let mut local = vec![mine.to_vec()];
        for r in 1..size {
            local.push(recv_bytes(&bridge, r, BRIDGE_TAG)?);
        }
        let ours = encode(&local);
        // The remote leader is the bridge's rank `size`, the first after the local group.
        let theirs = scope(|s| {
            let sent = bridge.isend(s, &ours, size, BRIDGE_TAG)?;
            let theirs = recv_bytes(&bridge, size, BRIDGE_TAG);
            sent.wait()?;
            theirs
        })?;
        let both = encode(&[ours, theirs.clone()]);
        scope(|s| {
            let mut sends = (1..size)
                .map(|r| bridge.isend(s, &both, r, BRIDGE_TAG))
                .collect::<Result<Vec<_>>>()?;
            crate::request::wait_all(&mut sends).map(drop)
        })?;
        Ok(Tables {
            local,
            remote: decode(&theirs)?,
        })
    }
}

/// The members of a split's new group: those whose entry (context, color, key) has `color`,
/// ordered by key, then by rank in `group`.
fn split_members(table: &[Vec<u8>], group: &Group, color: i32) -> Result<Group> {
    let mut chosen = Vec::new();
    for (rank, entry) in table.iter().enumerate() {
        if read_u32(entry, 4)? as i32 == color {
            chosen.push((read_u32(entry, 8)? as i32, rank as i32));
        }
    }
    chosen.sort();
    let members = chosen
        .iter()
        .map(|&(_, r)| group.world_rank(r))
        .collect::<Result<_>>()?;
    Ok(Group::from_members(members))
}

/// A message of any length from `source` on `comm`'s point-to-point context.
fn recv_bytes(comm: &Communicator, source: i32, tag: i32) -> Result<Vec<u8>> {
    let (message, status) = comm.mprobe(source, tag)?;
    let len = status.bytes.ok_or_else(|| {
        Error::InvalidArgument(
            "a custom-typed message where a communicator's setup expects bytes".into(),
        )
    })?;
    let mut buf = vec![0u8; len as usize];
    message.recv(&mut buf)?;
    Ok(buf)
}

/// Entries end to end, each after its length.
fn encode(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        out.extend_from_slice(&(e.len() as u32).to_le_bytes());
        out.extend_from_slice(e);
    }
    out
}

fn decode(mut buf: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let len = read_u32(buf, 0)? as usize;
        let entry = buf.get(4..4 + len).ok_or_else(malformed)?;
        out.push(entry.to_vec());
        buf = &buf[4 + len..];
    }
    Ok(out)
}

/// World ranks, four bytes each.
fn read_members(buf: &[u8]) -> Result<Vec<u32>> {
    if buf.len() % 4 != 0 {
        return Err(malformed());
    }
    (0..buf.len())
        .step_by(4)
        .map(|at| read_u32(buf, at))
        .collect()
}

fn read_u32(buf: &[u8], at: usize) -> Result<u32> {
    buf.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(malformed)
}

fn malformed() -> Error {
    Error::Transport("malformed entry in an inter-communicator agreement".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_round_trip() {
        let entries = vec![vec![1, 2, 3], vec![], vec![9; 9]];
        assert_eq!(decode(&encode(&entries)).unwrap(), entries);
        assert!(decode(&[5, 0, 0, 0, 1]).is_err());
        assert_eq!(read_members(&[1, 0, 0, 0, 7, 0, 0, 0]).unwrap(), vec![1, 7]);
        assert!(read_members(&[1, 0]).is_err());
    }

    #[test]
    fn split_orders_by_key_then_rank() {
        let entry = |color: i32, key: i32| {
            let mut e = 0u32.to_le_bytes().to_vec();
            e.extend_from_slice(&color.to_le_bytes());
            e.extend_from_slice(&key.to_le_bytes());
            e
        };
        let table = vec![entry(1, 5), entry(2, 0), entry(1, 5), entry(1, -1)];
        let group = Group::from_members(vec![10, 11, 12, 13]);
        assert_eq!(
            split_members(&table, &group, 1).unwrap().members(),
            vec![13, 10, 12]
        );
        assert!(split_members(&table, &group, 3).unwrap().is_empty());
    }
}
