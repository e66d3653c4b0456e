//! How processes of different jobs name each other: a [`ProcDesc`] (job namespace, rank in
//! that job, UCX worker address, and where it runs, for the liveness watch), the byte form in
//! which descriptors and tables travel, and the text of a port name ([`PortName`]). Pure
//! encoding, no communication.

use crate::error::{DynamicError, Error, Result};
use crate::liveness::Identity;

/// A process anywhere: what another job needs to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcDesc {
    /// Its job's namespace (PMIx), unique among the jobs that may meet.
    pub ns: String,
    /// Its rank in that job.
    pub rank: u32,
    /// Its UCX worker address.
    pub address: Vec<u8>,
    /// Its pid and node (the liveness watch, and whether endpoints to it check for errors,
    /// which both ends of a connection must agree on).
    pub identity: Option<Identity>,
}

impl ProcDesc {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.rank.to_le_bytes());
        put_bytes(out, self.ns.as_bytes());
        put_bytes(out, &self.address);
        put_bytes(
            out,
            &self
                .identity
                .as_ref()
                .map(Identity::encode)
                .unwrap_or_default(),
        );
    }

    /// Reads one descriptor at the front of `buf`, which moves past it.
    pub(crate) fn decode(buf: &mut &[u8]) -> Result<ProcDesc> {
        let rank = take_u32(buf)?;
        let ns = String::from_utf8(take_bytes(buf)?.to_vec()).map_err(|_| malformed())?;
        let address = take_bytes(buf)?.to_vec();
        let identity = match take_bytes(buf)? {
            [] => None,
            id => Some(Identity::decode(id).ok_or_else(malformed)?),
        };
        Ok(ProcDesc {
            ns,
            rank,
            address,
            identity,
        })
    }
}

/// A table of descriptors (a group's members, in rank order).
pub(crate) fn encode_table(table: &[ProcDesc], out: &mut Vec<u8>) {
    out.extend_from_slice(&(table.len() as u32).to_le_bytes());
    for d in table {
        d.encode(out);
    }
}

pub(crate) fn decode_table(buf: &mut &[u8]) -> Result<Vec<ProcDesc>> {
    let n = take_u32(buf)?;
    (0..n).map(|_| ProcDesc::decode(buf)).collect()
}

/// A length, then the bytes.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

pub(crate) fn take_u32(buf: &mut &[u8]) -> Result<u32> {
    let (head, rest) = buf.split_first_chunk::<4>().ok_or_else(malformed)?;
    *buf = rest;
    Ok(u32::from_le_bytes(*head))
}

pub(crate) fn take_bytes<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8]> {
    let len = take_u32(buf)? as usize;
    if buf.len() < len {
        return Err(malformed());
    }
    let (head, rest) = buf.split_at(len);
    *buf = rest;
    Ok(head)
}

fn malformed() -> Error {
    Error::Transport("malformed message in a dynamic-process handshake".into())
}

/// The text of a port: `mpicd-port:<id>:<rank>:<pid>:<address>:<node>:<namespace>` (address
/// and node in base64), naming the port's number in its process and that process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PortName {
    pub id: u32,
    pub owner: ProcDesc,
}

const PORT_PREFIX: &str = "mpicd-port:";

impl PortName {
    pub(crate) fn format(&self) -> String {
        let (pid, node) = match &self.owner.identity {
            Some(i) => (i.pid, i.node.as_str()),
            None => (0, ""),
        };
        format!(
            "{PORT_PREFIX}{}:{}:{pid}:{}:{}:{}",
            self.id,
            self.owner.rank,
            base64(&self.owner.address),
            base64(node.as_bytes()),
            self.owner.ns
        )
    }

    /// Reads a port name; [`DynamicError::Port`] if it is not one.
    pub(crate) fn parse(text: &str) -> Result<PortName> {
        let bad = || Error::Dynamic(DynamicError::Port, format!("{text:?} is not a port name"));
        let rest = text.strip_prefix(PORT_PREFIX).ok_or_else(bad)?;
        let mut parts = rest.splitn(6, ':');
        let mut next = || parts.next().ok_or_else(bad);
        let id = next()?.parse().map_err(|_| bad())?;
        let rank = next()?.parse().map_err(|_| bad())?;
        let pid = next()?.parse().map_err(|_| bad())?;
        let address = unbase64(next()?).ok_or_else(bad)?;
        let node = String::from_utf8(unbase64(next()?).ok_or_else(bad)?).map_err(|_| bad())?;
        let ns = next()?.to_string();
        if ns.is_empty() || address.is_empty() {
            return Err(bad());
        }
        Ok(PortName {
            id,
            owner: ProcDesc {
                ns,
                rank,
                address,
                identity: (!node.is_empty()).then_some(Identity { pid, node }),
            },
        })
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 without padding.
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for n in 0..20u8 {
            let bytes: Vec<u8> = (0..n)
                .map(|i| i.wrapping_mul(37).wrapping_add(200))
                .collect();
            assert_eq!(unbase64(&base64(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64(b"Man"), "TWFu");
        assert!(unbase64("a*b").is_none());
    }

    #[test]
    fn port_names_round_trip() {
        let port = PortName {
            id: 7,
            owner: ProcDesc {
                ns: "prterun-host-1@1:x".into(),
                rank: 3,
                address: vec![1, 2, 3, 250],
                identity: Some(Identity {
                    pid: 12,
                    node: "host/boot:id/pid:[4026531836]".into(),
                }),
            },
        };
        assert_eq!(PortName::parse(&port.format()).unwrap(), port);
        assert!(PortName::parse("mpicd-port:1:2").is_err());
        assert!(PortName::parse("tcp://host:1").is_err());
    }

    #[test]
    fn tables_round_trip() {
        let d = ProcDesc {
            ns: "job".into(),
            rank: 1,
            address: vec![9; 5],
            identity: Some(Identity {
                pid: 42,
                node: "n".into(),
            }),
        };
        let mut out = Vec::new();
        encode_table(&[d.clone(), d.clone()], &mut out);
        let mut buf = &out[..];
        assert_eq!(decode_table(&mut buf).unwrap(), vec![d.clone(), d]);
        assert!(buf.is_empty());
        assert!(decode_table(&mut &out[..5]).is_err());
    }
}
