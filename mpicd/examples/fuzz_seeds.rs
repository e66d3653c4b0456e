//! Writes the fuzz targets' seed corpus: the leads mpicd's planner makes for a few real shapes
//! (`mpicd::fuzzing::seed_leads`), one file each, into DIR/wire_lead and DIR/wire_table.
//! Usage: fuzz_seeds DIR (scripts/fuzz.sh runs it).

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus".into()),
    );
    for target in ["wire_lead", "wire_table"] {
        let out = dir.join(target);
        std::fs::create_dir_all(&out)?;
        for (i, lead) in mpicd::fuzzing::seed_leads().iter().enumerate() {
            std::fs::write(out.join(format!("seed-{i:02}")), lead)?;
        }
    }
    println!(
        "fuzz_seeds: wrote {} seeds per target under {}",
        mpicd::fuzzing::seed_leads().len(),
        dir.display()
    );
    Ok(())
}
