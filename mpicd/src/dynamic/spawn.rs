//! `MPI_Comm_spawn` and `MPI_Comm_spawn_multiple`: the root opens a port and asks the launcher
//! to start the new job (PMIx_Spawn) with that port in the children's environment
//! ([`PARENT_PORT_VAR`]); the parents then accept on it while the children, in their
//! `MPI_Init`, connect to it ([`connect_parent`]): both get the inter-communicator between
//! the parents' communicator and the children's world.

use super::connect::{connect_timeout, Side};
use crate::bootstrap::LaunchApp;
use crate::collective::allgather_bytes;
use crate::comm::Communicator;
use crate::error::{DynamicError, Error, Result};
use crate::session::Session;
use std::sync::Arc;
use std::time::Instant;

/// The environment variable that carries the parents' port to spawned processes.
pub const PARENT_PORT_VAR: &str = "MPICD_PARENT_PORT";

/// One program to start, with its arguments and how many copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnApp {
    /// The program (found as the launcher finds programs: a path, or a name in `PATH`).
    pub command: String,
    /// Its arguments (not the program's name).
    pub args: Vec<String>,
    /// How many processes of it (at least 1).
    pub procs: u32,
    /// Where they start (`wdir`); `None`: the spawning process's current directory.
    pub wdir: Option<String>,
    /// The host(s) they run on (`host`, a comma-separated list); `None`: where the launcher
    /// chooses.
    pub host: Option<String>,
}

/// The parents' port if this process was spawned by mpicd (read once).
pub fn parent_port() -> Option<String> {
    static PORT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PORT.get_or_init(|| {
        std::env::var(PARENT_PORT_VAR)
            .ok()
            .filter(|p| !p.is_empty())
    })
    .clone()
}

/// The inter-communicator to the parents of a spawned job (collective over `world`, the
/// children's world); `None` when this process was not spawned.
pub fn connect_parent(world: &Communicator) -> Result<Option<Communicator>> {
    match parent_port() {
        Some(port) => world.connect(Some(&port), 0).map(Some),
        None => Ok(None),
    }
}

impl Communicator {
    /// Starts `apps` as one new job and returns the inter-communicator between this
    /// communicator's group and the new job's processes, in the order of `apps`
    /// (`MPI_Comm_spawn(_multiple)`; collective; `apps` is read at `root` only). All of them
    /// start, or the call fails with [`DynamicError::Spawn`] (also when they do not connect
    /// within four times `MPICD_CONNECT_TIMEOUT`).
    pub fn spawn(&self, apps: Option<&[SpawnApp]>, root: i32) -> Result<Communicator> {
        self.require_intra("MPI_Comm_spawn")?;
        if !(0..self.size()).contains(&root) {
            return Err(Error::InvalidRank {
                rank: root,
                size: self.size(),
            });
        }
        let is_root = self.rank == root;
        let session = Session {
            shared: Arc::clone(&self.shared),
            rank: 0,
            size: 0,
        };
        let started = match (is_root, apps) {
            (true, Some(apps)) => self.launch(&session, apps),
            (true, None) => Err(spawn_error("no applications at the root".into())),
            (false, _) => Ok(String::new()),
        };
        let note = match (&started, is_root) {
            (Ok(_), true) => vec![1u8],
            (Err(e), true) => {
                let mut note = vec![0u8];
                note.extend_from_slice(e.to_string().as_bytes());
                note
            }
            _ => Vec::new(),
        };
        let all = allgather_bytes(self, &note)?;
        let port = started?;
        if all[root as usize].first() != Some(&1) {
            let why = String::from_utf8_lossy(all[root as usize].get(1..).unwrap_or(&[]));
            return Err(spawn_error(format!("the root could not spawn: {why}")));
        }
        let deadline = Instant::now() + 4 * connect_timeout();
        let side = is_root.then(|| Side::Accept {
            port: &port,
            deadline: Some(deadline),
        });
        let inter = self.handshake(side, root);
        if is_root {
            let _ = session.close_port(&port);
        }
        inter
    }

    /// The root's part of [`Communicator::spawn`]: opens the port and starts the job; the
    /// port.
    fn launch(&self, session: &Session, apps: &[SpawnApp]) -> Result<String> {
        if apps.is_empty() || apps.iter().any(|a| a.procs == 0 || a.command.is_empty()) {
            return Err(spawn_error(
                "every application needs a command and at least one process".into(),
            ));
        }
        let port = session.open_port()?;
        let here = std::env::current_dir()
            .ok()
            .map(|d| d.to_string_lossy().into_owned());
        let launch: Vec<LaunchApp> = apps
            .iter()
            .map(|a| LaunchApp {
                command: a.command.clone(),
                args: a.args.clone(),
                env: vec![format!("{PARENT_PORT_VAR}={port}")],
                wdir: a.wdir.clone().or_else(|| here.clone()),
                host: a.host.clone(),
                procs: a.procs,
            })
            .collect();
        match self.shared.with(|e| e.spawn(&launch)) {
            Ok(_namespace) => Ok(port),
            Err(e) => {
                let _ = session.close_port(&port);
                Err(e)
            }
        }
    }
}

fn spawn_error(why: String) -> Error {
    Error::Dynamic(DynamicError::Spawn, why)
}
