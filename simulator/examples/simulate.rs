//! Stand-alone `simulate` command (the daemon exposes the same as `boardcast simulate`).

use clap::Parser;

/// A virtual DGT board on a pseudo-terminal.
#[derive(Parser)]
#[command(name = "simulate")]
struct Cli {
    #[command(flatten)]
    args: boardcast_simulator::SimulateArgs,
}

fn main() {
    if let Err(e) = boardcast_simulator::run(Cli::parse().args) {
        eprintln!("simulate: {e}");
        std::process::exit(1);
    }
}
