//! Unit tests of the operations' transitions that need no transport: how a course turns failed
//! or stopped, and what a receive makes of the lead and table messages it collected.

use super::lead::{decode_lead, decode_table};
use super::Course;
use crate::datatype::ElementType;
use crate::error::Error;
use crate::plan::{choose, CustomConfig, Reach};
use crate::tag::MessageKind;
use crate::transport::Collector;
use crate::wire::{Lead, RegionShape, Shape, WirePlan, HEADER_BYTES, LEAD_MAX};

#[test]
fn a_course_keeps_its_first_error_and_a_stop_is_final() {
    let mut c = Course::default();
    assert!(c.is_running() && !c.is_stopped() && c.error().is_none());
    c.fail(Error::Cancelled);
    c.fail(Error::RemoteFailure);
    assert!(matches!(c, Course::Failed(Error::Cancelled)));
    assert!(!c.is_stopped());
    // Stopping keeps the first error as the one reported.
    c.stop(Error::ProcFailed { rank: 3 });
    assert!(c.peer_lost() && c.is_stopped());
    assert!(matches!(c.error(), Some(Error::Cancelled)));
    // Nothing turns a stopped course back into a failed or running one.
    c.fail(Error::InvalidMessage);
    c.stop(Error::Cancelled);
    assert!(c.peer_lost());
    assert!(matches!(c.outcome(()), Err(Error::Cancelled)));
    // The outcome is taken: the course is over.
    assert!(c.is_running());
}

#[test]
fn a_stop_without_a_dead_peer_is_not_a_lost_peer() {
    let mut c = Course::default();
    c.stop(Error::Cancelled);
    assert!(c.is_stopped() && !c.peer_lost());
    let mut c = Course::default();
    c.stop(Error::ProcFailed { rank: 1 });
    assert!(c.peer_lost());
    assert!(matches!(c.outcome(5), Err(Error::ProcFailed { rank: 1 })));
    assert!(matches!(Course::default().outcome(5), Ok(5)));
}

fn lead_of(plan: &WirePlan) -> Collector {
    let mut bytes = Vec::new();
    plan.encode_header(&mut bytes);
    bytes.resize(plan.lead_bytes(), 7);
    Collector {
        received: bytes.len(),
        keep: LEAD_MAX,
        bytes,
    }
}

fn plan(runs: u64, inline: usize) -> WirePlan {
    let cfg = CustomConfig {
        inline_bytes: inline,
        inline_split: inline,
        ..CustomConfig::default()
    };
    let regions = (0..runs).map(|i| RegionShape {
        bytes: 8 + i,
        elem: ElementType::U8,
    });
    let mut plan = choose(Shape::new(100, regions), &cfg, Reach::Remote).unwrap();
    plan.seq_base = 40;
    plan
}

#[test]
fn a_lead_with_its_table_gives_the_whole_plan() {
    let sent = plan(3, 100);
    let mut lead = lead_of(&sent);
    match decode_lead(MessageKind::Custom, &mut lead).unwrap() {
        Lead::Complete { plan, inline_at } => {
            assert_eq!(plan, sent);
            assert_eq!(lead.bytes.len() - inline_at, sent.inline_bytes as usize);
        }
        Lead::TableApart { .. } => panic!("the table fits in the lead"),
    }
}

#[test]
fn a_lead_whose_table_travels_apart_waits_for_the_table() {
    let sent = plan(1000, 0);
    assert!(sent.table_apart);
    let mut lead = lead_of(&sent);
    let Lead::TableApart { mut plan, runs } = decode_lead(MessageKind::Custom, &mut lead).unwrap()
    else {
        panic!("the table does not fit in the lead");
    };
    assert_eq!(runs, 1000);
    assert_eq!(plan.table_seq(), 40);
    let mut encoded = Vec::new();
    sent.encode_table(&mut encoded);
    // A table cut short by the transport is refused.
    let mut short = Collector {
        received: encoded.len() + 1,
        keep: encoded.len(),
        bytes: encoded.clone(),
    };
    assert!(decode_table(&mut short, &mut plan.clone(), runs).is_err());
    let mut table = Collector {
        received: encoded.len(),
        keep: encoded.len(),
        bytes: encoded,
    };
    assert_eq!(decode_table(&mut table, &mut plan, runs).unwrap(), sent);
}

#[test]
fn a_contiguous_message_or_a_malformed_lead_fails_the_receive() {
    let mut lead = lead_of(&plan(2, 10));
    assert!(matches!(
        decode_lead(MessageKind::Contiguous, &mut lead),
        Err(Error::DatatypeMismatch {
            message: MessageKind::Contiguous
        })
    ));
    assert!(lead.bytes.is_empty(), "the collector's buffer is let go");
    // Longer than any lead: what the collector kept is not trusted.
    let mut long = lead_of(&plan(2, 10));
    long.received = LEAD_MAX + 1;
    assert!(matches!(
        decode_lead(MessageKind::Custom, &mut long),
        Err(Error::InvalidDatatype(_))
    ));
    let mut cut = lead_of(&plan(2, 10));
    cut.bytes.truncate(HEADER_BYTES - 1);
    assert!(decode_lead(MessageKind::Custom, &mut cut).is_err());
}
