//! Entry points for fuzzing the wire decoders with bytes a peer could send (feature `fuzzing`;
//! the targets are in `fuzz/`, run by `make fuzz`). Each entry decodes as the receiver does and,
//! when the bytes decode, walks everything a receive would derive from them (every zero-copy
//! region, every private message's sequence number and size) and checks that the decoded plan,
//! encoded again, decodes to the same plan (the bytes themselves may differ: a table may split
//! a run in two or hold an empty one, which the decoder merges or drops). A panic here is a
//! finding; an error is the expected answer to bytes that make no sense. Not part of the
//! supported API.

use crate::plan::{choose, CustomConfig, Reach};
use crate::wire::{Lead, RegionShape, Shape, WirePlan, HEADER_BYTES};
use crate::ElementType;

/// Everything a receive derives from a decoded plan, computed to find overflows and panics.
fn walk(plan: &WirePlan) {
    let mut cursor = (0usize, 0usize);
    let mut zero_copy = 0u64;
    while let Some((_, bytes)) = plan.next_zero_copy(&mut cursor) {
        assert!(
            plan.is_zero_copy(bytes),
            "a zero-copy region under the threshold"
        );
        zero_copy += 1;
        if zero_copy > plan.zero_copy_count {
            break;
        }
    }
    assert_eq!(
        zero_copy, plan.zero_copy_count,
        "zero-copy regions miscounted"
    );
    let _ = (
        plan.body_bytes(),
        plan.body_message_bytes(),
        plan.lead_bytes(),
    );
    let _ = (plan.table_seq(), plan.body_seq(), plan.private_messages());
    for k in 0..plan.region_messages().min(4) {
        let _ = plan.region_seq(k);
    }
    let _ = (plan.shape.region_count(), plan.shape.region_bytes());
}

/// A lead message as it arrives: decoded, walked, and re-encoded when it decodes.
pub fn wire_lead(bytes: &[u8]) {
    match WirePlan::decode_lead(bytes) {
        Ok(Lead::Complete { plan, inline_at }) => {
            walk(&plan);
            let mut again = Vec::new();
            plan.encode_header(&mut again);
            again.extend_from_slice(&bytes[inline_at..]);
            match WirePlan::decode_lead(&again) {
                Ok(Lead::Complete { plan: same, .. }) => {
                    assert_eq!(plan, same, "the re-encoded lead decodes to another plan")
                }
                other => panic!("the re-encoded lead does not decode: {other:?}"),
            }
        }
        Ok(Lead::TableApart { plan, runs }) => {
            assert!(plan.table_apart);
            let _ = (runs, plan.table_bytes());
        }
        Err(_) => {}
    }
}

/// A lead header followed by a region table sent apart: both decoded as the receiver does.
pub fn wire_table(bytes: &[u8]) {
    let Some(head) = bytes.get(..HEADER_BYTES) else {
        return;
    };
    let Ok((mut plan, runs)) = WirePlan::decode_header(head) else {
        return;
    };
    if plan.decode_table(runs, &bytes[HEADER_BYTES..]).is_ok() {
        walk(&plan);
        let mut again = Vec::new();
        plan.encode_table(&mut again);
        let (mut same, _) = WirePlan::decode_header(head).expect("decoded once");
        let runs = plan.shape.run_slice().len() as u64;
        if let Err(e) = same.decode_table(runs, &again) {
            panic!("the re-encoded table fails: {e}");
        }
        assert_eq!(
            plan.shape, same.shape,
            "the re-encoded table decodes to another shape"
        );
    }
}

/// Leads of real messages (what mpicd's planner sends for a few shapes, near and far, with the
/// table inside the lead and apart), the seed corpus of the targets.
pub fn seed_leads() -> Vec<Vec<u8>> {
    let cfg = CustomConfig::default();
    let region = |bytes: u64, elem: ElementType| RegionShape { bytes, elem };
    let shapes = [
        Shape::new(0, []),
        Shape::new(16, []),
        Shape::new(24, [region(8 << 10, ElementType::F64); 4]),
        Shape::new(
            100,
            (0..40).map(|i| region(1 << (i % 22), ElementType::ALL[i % 11])),
        ),
        Shape::new(
            5000,
            [
                region(1 << 20, ElementType::I32),
                region(3, ElementType::Byte),
            ],
        ),
        Shape::new(8, (0..600).map(|i| region(i as u64 + 1, ElementType::U8))),
    ];
    let mut leads = Vec::new();
    for shape in shapes {
        for reach in [Reach::NodeLocal, Reach::Remote] {
            if let Ok(plan) = choose(shape.clone(), &cfg, reach) {
                let mut lead = Vec::new();
                plan.encode_header(&mut lead);
                lead.resize(lead.len() + plan.inline_bytes as usize, 0xa5);
                leads.push(lead);
            }
        }
    }
    let mut failed = Vec::new();
    WirePlan::failure().encode_header(&mut failed);
    leads.push(failed);
    leads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_decode_and_truncations_fail_cleanly() {
        for lead in seed_leads() {
            wire_lead(&lead);
            wire_table(&lead);
            for cut in 0..lead.len().min(200) {
                wire_lead(&lead[..cut]);
                wire_table(&lead[..cut]);
            }
            let mut flipped = lead.clone();
            for i in 0..flipped.len().min(128) {
                flipped[i] ^= 0xff;
                wire_lead(&flipped);
                wire_table(&flipped);
                flipped[i] ^= 0xff;
            }
        }
    }
}
