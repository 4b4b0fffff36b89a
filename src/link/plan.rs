//! Which board is where: turns `--port` options, the config file's boards (by port or
//! by serial number) and `--auto` into board numbers with a fixed port, and the serial
//! numbers discovery looks for.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;

/// How the config file says a board is found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Locator {
    /// The board's serial port.
    pub port: Option<PathBuf>,
    /// The board's serial number, as the board reports it (the status shows it).
    pub serial: Option<String>,
}

/// The boards to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoardPlan {
    /// Board n's port at index n − 1; empty where the board is found by discovery.
    pub ports: Vec<PathBuf>,
    /// Boards found by serial number, and their numbers.
    pub serials: HashMap<String, usize>,
    /// Whether discovery runs (a serial number is wanted, or `--auto`).
    pub discover: bool,
}

/// Why the boards cannot be planned; each says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Nothing says where any board is.
    #[error(
        "no boards: give --port PATH or --bus PATH, list boards by port or serial in the config file, or use --auto"
    )]
    NoBoards,
    /// Both the command line and the config file list boards.
    #[error("the config file lists boards by port or serial number; do not also give --port")]
    Both,
    /// A config board with both a port and a serial number.
    #[error("config board {0}: give its port or its serial number, not both")]
    PortAndSerial(usize),
    /// A config board with neither, among boards that have one, without `--auto`.
    #[error("config board {0} has neither port nor serial number (give one, or use --auto)")]
    Unlocated(usize),
    /// Two boards with the same serial number or port.
    #[error("config boards {0} and {1} name the same board")]
    Duplicate(usize, usize),
}

/// Plans the boards from the `--port` options, the config's boards and `--auto`.
pub fn plan(ports: &[PathBuf], boards: &[Locator], auto: bool) -> Result<BoardPlan, PlanError> {
    let located = boards
        .iter()
        .any(|b| b.port.is_some() || b.serial.is_some());
    if !ports.is_empty() {
        return match located {
            true => Err(PlanError::Both),
            false => Ok(BoardPlan {
                ports: ports.to_vec(),
                serials: HashMap::new(),
                discover: auto,
            }),
        };
    }
    if !located {
        return match auto {
            true => Ok(BoardPlan {
                discover: true,
                ..BoardPlan::default()
            }),
            false => Err(PlanError::NoBoards),
        };
    }
    let mut plan = BoardPlan {
        discover: true,
        ..BoardPlan::default()
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, board) in boards.iter().enumerate() {
        let id = index + 1;
        let key = match (&board.port, &board.serial) {
            (Some(_), Some(_)) => return Err(PlanError::PortAndSerial(id)),
            (None, None) if !auto => return Err(PlanError::Unlocated(id)),
            (None, None) => None,
            (Some(port), None) => Some(format!("port {}", port.display())),
            (None, Some(serial)) => {
                plan.serials.insert(serial.clone(), id);
                Some(format!("serial {serial}"))
            }
        };
        if let Some(key) = key
            && let Some(first) = seen.insert(key, id)
        {
            return Err(PlanError::Duplicate(first, id));
        }
        plan.ports.push(board.port.clone().unwrap_or_default());
    }
    plan.discover = auto || !plan.serials.is_empty();
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serial(s: &str) -> Locator {
        Locator {
            port: None,
            serial: Some(s.into()),
        }
    }

    fn port(p: &str) -> Locator {
        Locator {
            port: Some(p.into()),
            serial: None,
        }
    }

    #[test]
    fn port_options_number_the_boards_in_order() {
        let plan = plan(&["/dev/a".into(), "/dev/b".into()], &[], false).expect("plan");
        assert_eq!(plan.ports, [PathBuf::from("/dev/a"), "/dev/b".into()]);
        assert!(!plan.discover);
        // Players only in the config: the ports still number the boards.
        let players = [Locator::default(), Locator::default()];
        assert!(super::plan(&["/dev/a".into()], &players, false).is_ok());
    }

    #[test]
    fn config_boards_by_port_and_serial() {
        let plan = plan(&[], &[serial("01025"), port("/dev/x"), serial("7")], false).expect("plan");
        assert_eq!(
            plan.ports,
            [PathBuf::new(), "/dev/x".into(), PathBuf::new()]
        );
        assert_eq!(
            plan.serials,
            HashMap::from([("01025".into(), 1), ("7".into(), 3)])
        );
        assert!(plan.discover);
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(plan(&[], &[], false), Err(PlanError::NoBoards));
        assert_eq!(
            plan(&["/dev/a".into()], &[serial("1")], false),
            Err(PlanError::Both)
        );
        let both = Locator {
            port: Some("/dev/a".into()),
            serial: Some("1".into()),
        };
        assert_eq!(plan(&[], &[both], false), Err(PlanError::PortAndSerial(1)));
        assert_eq!(
            plan(&[], &[serial("1"), Locator::default()], false),
            Err(PlanError::Unlocated(2))
        );
        assert!(plan(&[], &[serial("1"), Locator::default()], true).is_ok());
        assert_eq!(
            plan(&[], &[serial("1"), port("/dev/a"), serial("1")], false),
            Err(PlanError::Duplicate(1, 3))
        );
        assert!(plan(&[], &[], true).expect("auto").discover);
    }
}
