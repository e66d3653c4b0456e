//! Unit tests of the plan and the wire format together: plans chosen here go through
//! encoding and decoding as a receiver sees them.

use super::choose::BODY_EAGER_MAX;
use super::{choose, CustomConfig, Reach};
use crate::datatype::ElementType;
use crate::wire::*;

fn region(bytes: u64) -> RegionShape {
    RegionShape {
        bytes,
        elem: ElementType::I32,
    }
}

fn cfg(inline_bytes: usize, zcopy_threshold: usize) -> CustomConfig {
    CustomConfig {
        inline_bytes,
        inline_split: inline_bytes,
        zcopy_threshold,
        zcopy_depth: 3,
        node_local: true,
    }
}

fn round_trip(plan: &WirePlan) -> WirePlan {
    let mut lead = Vec::new();
    plan.encode_header(&mut lead);
    assert_eq!(lead.len() + plan.inline_bytes as usize, plan.lead_bytes());
    lead.extend(std::iter::repeat(0u8).take(plan.inline_bytes as usize));
    let (back, at) = WirePlan::decode(&lead).unwrap();
    assert_eq!(lead.len() - at, plan.inline_bytes as usize);
    back
}

#[test]
fn plan_splits_regions_by_threshold_and_round_trips() {
    let regions = [region(8), region(8), region(4000), region(8)];
    let mut plan = choose(Shape::new(50, regions), &cfg(100, 1000), Reach::Remote).unwrap();
    plan.seq_base = 77;
    assert_eq!(plan.stream_bytes, 50 + 24);
    assert_eq!(plan.inline_bytes, 74);
    assert_eq!(plan.body_messages(), 0);
    assert_eq!(plan.zero_copy_count, 1);
    assert_eq!(plan.region_seq(0), 77);
    assert!(plan.is_zero_copy(4000) && !plan.is_zero_copy(8));
    assert_eq!(plan.shape.run_slice().len(), 3);
    assert_eq!(round_trip(&plan), plan);
}

#[test]
fn equal_regions_compress_to_one_run() {
    let shape = Shape::new(0, std::iter::repeat(region(4096)).take(10_000));
    let plan = choose(shape, &CustomConfig::default(), Reach::Remote).unwrap();
    let mut lead = Vec::new();
    plan.encode_header(&mut lead);
    assert_eq!(lead.len(), HEADER_BYTES + 16);
    let back = round_trip(&plan);
    assert_eq!(back.shape.region_count(), 10_000);
    assert_eq!(back.shape.region_bytes(), 4096 * 10_000);
    assert_eq!(back.stream_bytes, 4096 * 10_000);
}

#[test]
fn shape_runs_iterate_and_index() {
    let mut shape = Shape::new(3, [region(8), region(8), region(0), region(16), region(16)]);
    shape.push(region(16));
    assert_eq!(shape.region_count(), 6);
    assert_eq!(shape.regions().len(), 6);
    assert_eq!(
        shape.runs().collect::<Vec<_>>(),
        vec![(region(8), 2), (region(0), 1), (region(16), 3)]
    );
    let all: Vec<u64> = shape.regions().map(|r| r.bytes).collect();
    assert_eq!(all, vec![8, 8, 0, 16, 16, 16]);
    for (i, b) in all.iter().enumerate() {
        assert_eq!(shape.region(i).map(|r| r.bytes), Some(*b));
    }
    assert_eq!(shape.region(6), None);
    assert_eq!(shape.total_bytes(), 3 + 64);
    assert_eq!(shape, Shape::new(3, shape.regions()));
    assert_eq!(Shape::default().regions().next(), None);
}

#[test]
fn zero_copy_regions_are_found_run_by_run() {
    let sizes = [8, 2000, 2000, 8, 8, 0, 5000, 999, 1000];
    let plan = choose(
        Shape::new(0, sizes.map(region)),
        &cfg(0, 1000),
        Reach::Remote,
    )
    .unwrap();
    let mut cursor = (0, 0);
    let found: Vec<(usize, u64)> =
        std::iter::from_fn(|| plan.next_zero_copy(&mut cursor)).collect();
    assert_eq!(found, vec![(1, 2000), (2, 2000), (6, 5000), (8, 1000)]);
    assert_eq!(found.len() as u64, plan.zero_copy_count);
    assert_eq!(plan.next_zero_copy(&mut cursor), None);
}

#[test]
fn node_local_plans_of_long_messages_coalesce_every_region() {
    let sizes = [8u64, 64, 5000, 1 << 20];
    let shape = Shape::new(10, sizes.map(region));
    let plan = choose(shape.clone(), &cfg(0, 1000), Reach::NodeLocal).unwrap();
    assert_eq!(plan.zero_copy_count, 0);
    assert_eq!(plan.stream_bytes, 10 + sizes.iter().sum::<u64>());
    assert_eq!(plan.region_messages(), 0);
    assert_eq!(through_the_wire(&plan), plan);
    // To another node: one message per region from the zero-copy threshold.
    let remote = choose(shape.clone(), &cfg(0, 1000), Reach::Remote).unwrap();
    assert_eq!((remote.zero_copy_count, remote.stream_bytes), (2, 10 + 72));
    assert_eq!(through_the_wire(&remote), remote);
    // A short message to this node: its regions from 64 KiB apart.
    let short = Shape::new(10, [8u64, 5000, 100_000].map(region));
    let plan = choose(short, &cfg(0, 1000), Reach::NodeLocal).unwrap();
    assert_eq!((plan.zero_copy_count, plan.stream_bytes), (1, 10 + 5008));
    assert_eq!(through_the_wire(&plan), plan);
    // On this node where processes outnumber cores: regions from 64 KiB apart, whatever the
    // remote threshold says.
    let shared = choose(shape, &cfg(0, 1000), Reach::NodeShared).unwrap();
    assert_eq!(
        (shared.zero_copy_count, shared.stream_bytes),
        (1, 10 + 5072)
    );
    assert_eq!(through_the_wire(&shared), shared);
}

#[test]
fn the_body_carries_the_rest_of_the_stream_and_a_trailer() {
    let plan = choose(
        Shape::new(10 + 4096 * 2 + 5, []),
        &cfg(10, 1 << 20),
        Reach::Remote,
    )
    .unwrap();
    assert_eq!(plan.body_messages(), 1);
    assert_eq!(plan.body_bytes(), 4096 * 2 + 5);
    assert_eq!(plan.body_message_bytes(), 4096 * 2 + 5 + TRAILER_BYTES);
    assert_eq!(plan.body_seq(), plan.seq_base);
}

#[test]
fn failure_lead_round_trips() {
    let mut lead = Vec::new();
    WirePlan::failure().encode_header(&mut lead);
    let (back, _) = WirePlan::decode(&lead).unwrap();
    assert!(back.failed);
    assert_eq!(back.private_messages(), 0);
}

/// Encodes a plan's lead and (if apart) table and decodes them as a receiver does.
fn through_the_wire(plan: &WirePlan) -> WirePlan {
    let mut lead = Vec::new();
    plan.encode_header(&mut lead);
    lead.extend(std::iter::repeat(0u8).take(plan.inline_bytes as usize));
    assert_eq!(lead.len(), plan.lead_bytes());
    assert!(lead.len() <= LEAD_MAX, "lead of {} bytes", lead.len());
    // The header alone locates every private message.
    let (head, _) = WirePlan::decode_header(&lead[..HEADER_BYTES]).unwrap();
    assert_eq!(head.private_messages(), plan.private_messages());
    assert_eq!(head.region_seq(0), plan.region_seq(0));
    assert_eq!(head.body_seq(), plan.body_seq());
    match WirePlan::decode_lead(&lead).unwrap() {
        Lead::Complete {
            plan: back,
            inline_at,
        } => {
            assert!(!plan.table_apart);
            assert_eq!(lead.len() - inline_at, plan.inline_bytes as usize);
            back
        }
        Lead::TableApart {
            plan: mut back,
            runs,
        } => {
            assert!(plan.table_apart);
            let mut table = Vec::new();
            plan.encode_table(&mut table);
            assert_eq!(table.len(), plan.table_bytes());
            assert!(back.decode_table(runs, &table[1..]).is_err());
            back.decode_table(runs, &table).unwrap();
            back
        }
    }
}

#[test]
fn long_region_tables_travel_apart_and_leads_stay_bounded() {
    // Distinct lengths: one run per region.
    for n in [0usize, 1, 10, 200, 300, 5000] {
        for inline in [0usize, 777, 4000, MAX_INLINE_BYTES] {
            let shape = Shape::new(3000, (0..n as u64).map(|i| region(4 + 4 * i)));
            let mut plan = choose(shape, &cfg(inline, 4096), Reach::Remote).unwrap();
            plan.seq_base = 1000;
            let apart = plan.table_apart;
            assert_eq!(
                apart,
                HEADER_BYTES + 16 * n + plan.inline_bytes as usize > LEAD_MAX,
                "{n} runs, {inline} inline"
            );
            assert_eq!(plan.table_seq(), 1000);
            assert_eq!(plan.body_seq(), 1000 + apart as u64);
            assert_eq!(
                plan.private_messages(),
                apart as u64 + plan.body_messages() + plan.zero_copy_count
            );
            assert_eq!(through_the_wire(&plan), plan, "{n} runs, {inline} inline");
        }
    }
    // An inline size beyond the lead's room is capped, whatever the configuration says.
    let plan = choose(Shape::new(1 << 20, []), &cfg(1 << 20, 4096), Reach::Remote).unwrap();
    assert_eq!(plan.inline_bytes, MAX_INLINE_BYTES as u64);
    assert_eq!(plan.lead_bytes(), LEAD_MAX);
    assert_eq!(through_the_wire(&plan), plan);
}

#[test]
fn the_lead_carries_a_short_stream_whole_and_a_split_of_a_long_one() {
    let plan = |stream: u64, inline: usize, split: usize| {
        let c = CustomConfig {
            inline_split: split,
            ..cfg(inline, 1)
        };
        choose(Shape::new(stream, []), &c, Reach::NodeLocal)
            .unwrap()
            .inline_bytes
    };
    assert_eq!(plan(4000, 4000, 0), 4000); // fits: the whole message is the lead
    assert_eq!(plan(4001, 4000, 0), 0); // a body anyway: all of it there
    assert_eq!(plan(9000, 4000, 100), 100);
    assert_eq!(plan(9000, 4000, 5000), 4000); // the split never exceeds the lead's room
                                              // Just over UCX's eager limit: the lead takes the excess, the body stays eager.
    let edge = BODY_EAGER_MAX - TRAILER_BYTES as u64;
    assert_eq!(plan(edge, 4000, 0), 0);
    assert_eq!(plan(edge + 10, 4000, 0), 10);
    assert_eq!(plan(edge + 4000, 4000, 0), 4000);
    assert_eq!(plan(edge + 4001, 4000, 0), 0); // rendezvous whatever the lead takes
    let split0 = CustomConfig {
        inline_split: 0,
        ..cfg(4000, 1)
    };
    let p = choose(Shape::new(edge + 10, []), &split0, Reach::NodeLocal);
    assert_eq!(p.unwrap().body_message_bytes() as u64, BODY_EAGER_MAX);
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    assert!(WirePlan::decode_lead(&vec![0u8; LEAD_MAX + 1]).is_err());
    assert!(WirePlan::decode_header(&[0u8; HEADER_BYTES - 1]).is_err());
    assert!(WirePlan::decode(&[]).is_err());
    assert!(WirePlan::decode(&[0x4d, 0x50, 0x43, 0x44, 3, 0]).is_err());
    let mut lead = Vec::new();
    let plan = choose(Shape::new(5, []), &CustomConfig::default(), Reach::Remote).unwrap();
    plan.encode_header(&mut lead);
    assert!(WirePlan::decode(&lead).is_err(), "inline bytes missing");

    // Runs whose sizes overflow, and absurd counts, are refused.
    let huge = Shape::new(0, [region(BYTES_MASK), region(1)]);
    let mut plan = choose(huge, &cfg(0, 1), Reach::Remote).unwrap();
    plan.shape = Shape::default();
    plan.shape.push_run(region(BYTES_MASK), MAX_RUN as usize);
    plan.shape.push_run(region(1), 1);
    let mut lead = Vec::new();
    plan.encode_header(&mut lead);
    assert!(WirePlan::decode(&lead).is_err(), "overflowing sizes");
    let mut lead = Vec::new();
    let mut plan = choose(Shape::default(), &cfg(0, 1), Reach::Remote).unwrap();
    plan.shape.push_run(region(0), MAX_RUN as usize + 1);
    plan.encode_header(&mut lead);
    assert!(WirePlan::decode(&lead).is_err(), "absurd count");
}

#[test]
fn the_configuration_tables_inline_bound_is_the_leads_room() {
    assert_eq!(crate::config::MAX_INLINE_BYTES, LEAD_MAX - HEADER_BYTES);
    assert_eq!(MAX_INLINE_BYTES, crate::config::MAX_INLINE_BYTES);
}
