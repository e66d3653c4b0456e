//! Tests of the tool interface's logic. They share the process-wide state, so each test runs
//! under one lock.

use super::*;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn calls_before_init_fail_and_init_is_counted() {
    let _s = serial();
    assert_eq!(
        cvar::handle_alloc(0).unwrap_err().kind,
        FaultKind::NotInitialized
    );
    assert_eq!(init(), 1);
    assert_eq!(init(), 2);
    let (h, _) = cvar::handle_alloc(0).unwrap();
    finalize().unwrap();
    assert_eq!(cvar::handle_index(h).unwrap(), 0, "one init still open");
    finalize().unwrap();
    assert_eq!(finalize().unwrap_err().kind, FaultKind::NotInitialized);
    init();
    assert_eq!(
        cvar::handle_index(h).unwrap_err().kind,
        FaultKind::InvalidHandle,
        "the last finalize freed it"
    );
    finalize().unwrap();
}

#[test]
fn every_config_row_is_a_cvar_in_a_category() {
    let dump = crate::config::dump();
    assert_eq!(cvar::cvars().len(), dump.len());
    for (i, (c, e)) in cvar::cvars().iter().zip(&dump).enumerate() {
        assert_eq!(c.name, e.name);
        assert_eq!(cvar::index_of(c.name).unwrap(), i);
        let owners = categories().iter().filter(|k| k.cvars.contains(&i)).count();
        assert_eq!(owners, 1, "{}", c.name);
    }
    let wait = cvar::index_of("MPICD_WAIT").unwrap();
    assert_eq!(
        cvar::cvars()[wait].ty,
        cvar::CvarType::Choice(&cvar::WAIT_ENUM)
    );
    assert_eq!(
        cvar::index_of("MPICD_NOPE").unwrap_err().kind,
        FaultKind::InvalidName
    );
    let depth = cvar::index_of("MPICD_ZCOPY_DEPTH").unwrap();
    let expect = std::env::var("MPICD_ZCOPY_DEPTH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    assert_eq!(
        cvar::value(depth).unwrap(),
        cvar::CvarValue::UnsignedLongLong(expect)
    );
}

#[test]
fn a_counter_counts_while_started() {
    let _s = serial();
    init();
    let s = pvar::session_create().unwrap();
    let sent = pvar::index_of("mpicd_custom_sends", pvar::PvarClass::Counter).unwrap();
    let (h, count) = pvar::handle_alloc(s, sent).unwrap();
    assert_eq!(count, 1);
    pvar::CUSTOM_SENDS.add(5);
    assert_eq!(pvar::read(s, h).unwrap(), 0, "stopped at first");
    pvar::start(s, pvar::Target::All).unwrap();
    pvar::CUSTOM_SENDS.add(3);
    assert_eq!(pvar::read(s, h).unwrap(), 3);
    pvar::stop(s, pvar::Target::One(h)).unwrap();
    pvar::CUSTOM_SENDS.add(3);
    assert_eq!(pvar::readreset(s, h).unwrap(), 3);
    assert_eq!(pvar::read(s, h).unwrap(), 0);
    pvar::write(s, h, 40).unwrap();
    pvar::start(s, pvar::Target::One(h)).unwrap();
    pvar::CUSTOM_SENDS.add(2);
    assert_eq!(pvar::read(s, h).unwrap(), 42);
    let level = pvar::index_of("mpicd_peers_failed", pvar::PvarClass::Level).unwrap();
    let (l, _) = pvar::handle_alloc(s, level).unwrap();
    let fault = |r: ToolResult<()>| r.unwrap_err().kind;
    assert_eq!(
        fault(pvar::start(s, pvar::Target::One(l))),
        FaultKind::PvarNoStartStop
    );
    assert_eq!(
        fault(pvar::reset(s, pvar::Target::One(l))),
        FaultKind::PvarNoWrite
    );
    pvar::reset(s, pvar::Target::All).unwrap();
    assert_eq!(pvar::read(s, h).unwrap(), 0);
    let other = pvar::session_create().unwrap();
    assert_eq!(
        pvar::read(other, h).unwrap_err().kind,
        FaultKind::InvalidHandle
    );
    pvar::session_free(s).unwrap();
    assert_eq!(
        pvar::read(s, h).unwrap_err().kind,
        FaultKind::InvalidSession
    );
    pvar::session_free(other).unwrap();
    finalize().unwrap();
}

#[test]
fn an_event_reaches_a_restricted_callback_and_drops_for_others() {
    let _s = serial();
    init();
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let reg = event::handle_alloc(0).unwrap();
    let log = seen.clone();
    let cb: event::Callback = std::sync::Arc::new(move |i, _, safety| {
        let at = i as *const event::Instance as usize;
        let rank = event::with_instance(at, |i| i.data.clone()).unwrap();
        log.lock().unwrap().push((rank, safety));
    });
    event::set_callback(reg, event::Safety::ThreadSafe, Some(cb), 0).unwrap();
    let lazy = event::handle_alloc(0).unwrap();
    let drops = std::sync::Arc::new(Mutex::new(0u64));
    let d = drops.clone();
    event::set_dropped(
        lazy,
        Some(std::sync::Arc::new(move |n, _, _, _, _| {
            *d.lock().unwrap() += n
        })),
    )
    .unwrap();
    event::peer_failed(7);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(7i32.to_ne_bytes().to_vec(), event::Safety::MpiRestricted)]
    );
    assert_eq!(*drops.lock().unwrap(), 1);
    assert!(event::with_instance(16, |_| ()).is_err());
    event::handle_free(reg).unwrap();
    event::handle_free(lazy).unwrap();
    assert_eq!(
        event::handle_free(reg).unwrap_err().kind,
        FaultKind::InvalidHandle
    );
    finalize().unwrap();
}

#[test]
fn only_the_writable_knob_is_written_and_only_while_a_runtime_runs() {
    let _s = serial();
    init();
    let coll = cvar::index_of("MPICD_COLL_ALGORITHMS").unwrap();
    let depth = cvar::index_of("MPICD_ZCOPY_DEPTH").unwrap();
    let (h, count) = cvar::handle_alloc(coll).unwrap();
    assert!(count >= cvar::WRITABLE_TEXT_MAX);
    let (d, _) = cvar::handle_alloc(depth).unwrap();
    assert_eq!(
        cvar::write(d, "3").unwrap_err().kind,
        FaultKind::CvarSetNever
    );
    assert_eq!(
        cvar::write(h, "bcast=linear").unwrap_err().kind,
        FaultKind::CvarSetNotNow
    );
    fn apply(text: &str) -> crate::error::Result<()> {
        match text.starts_with("bcast=") || text.is_empty() {
            true => Ok(()),
            false => Err(crate::Error::InvalidArgument(format!("not {text}"))),
        }
    }
    cvar::make_writable(&crate::config::COLL_ALGORITHMS, apply);
    cvar::write(h, "bcast=linear").unwrap();
    assert_eq!(
        cvar::value(coll).unwrap(),
        cvar::CvarValue::Text("bcast=linear".into())
    );
    assert_eq!(cvar::write(h, "junk").unwrap_err().kind, FaultKind::Invalid);
    assert_eq!(
        cvar::value(coll).unwrap(),
        cvar::CvarValue::Text("bcast=linear".into()),
        "a refused value changes nothing"
    );
    cvar::end_writes();
    assert_eq!(
        cvar::write(h, "").unwrap_err().kind,
        FaultKind::CvarSetNotNow
    );
    finalize().unwrap();
}
