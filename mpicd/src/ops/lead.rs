//! What a custom-typed message's receive makes of the bytes its collectors took: the lead (the
//! message's plan, or why the receive fails) and, when it travels apart, the region table.

use crate::error::{Error, Result};
use crate::tag::MessageKind;
use crate::transport::Collector;
use crate::wire::{Lead, WirePlan, LEAD_MAX};

/// Decodes a lead the collector took from a message of `kind`: the plan, or why the receive
/// fails (a contiguous message, or a malformed lead).
pub(super) fn decode_lead(kind: MessageKind, lead: &mut Collector) -> Result<Lead> {
    if kind == MessageKind::Contiguous {
        // A contiguous message: the collector took all of it (keeping at most LEAD_MAX
        // bytes), and its sender completes normally.
        lead.bytes = Vec::new();
        return Err(Error::DatatypeMismatch {
            message: MessageKind::Contiguous,
        });
    }
    if lead.received > LEAD_MAX {
        return Err(Error::InvalidDatatype(
            "malformed custom message: lead longer than the protocol allows".into(),
        ));
    }
    WirePlan::decode_lead(&lead.bytes)
}

/// Completes `plan` (decoded from a lead whose table travels apart) with its `runs` region runs
/// from the table message the collector took.
pub(super) fn decode_table(
    table: &mut Collector,
    plan: &mut WirePlan,
    runs: u64,
) -> Result<WirePlan> {
    let bytes = std::mem::take(&mut table.bytes);
    if table.received != bytes.len() {
        return Err(Error::InvalidDatatype(
            "malformed custom message: region table of the wrong length".into(),
        ));
    }
    let mut plan = std::mem::replace(plan, WirePlan::failure());
    plan.decode_table(runs, &bytes)?;
    Ok(plan)
}
