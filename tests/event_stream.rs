//! Arbitrary event streams into one board's core, shared by the `inference` fuzz target
//! (`fuzz/fuzz_targets/inference.rs` includes this file) and the proptest in
//! `tests/inference_streams.rs`, so CI exercises the same checks the fuzzer does.
//!
//! The input bytes are a little program: each operation is a byte followed by its
//! arguments (missing bytes read as 0). Operations: a field update with any code, a
//! dump (start position, turned, the board of the game's position, random squares), a
//! legal move from the game's position shown as field updates in an input-chosen order,
//! a time step (the engine's timers run at their deadlines), an operator command, a
//! clock reading, and raw bytes. Every board message goes to the core as bytes through
//! the decoder, as on the wire. After every step:
//!
//! * nothing panics;
//! * the mirror equals the board the decoded bytes describe;
//! * the recorded game replays, SAN by SAN, as a legal game from its start position and
//!   ends in the record's position.

use std::time::Duration;

use boardcast::board::{BoardCommand, BoardCore};
use boardcast::game::GameRecord;
use boardcast::inference::EngineConfig;
use boardcast_protocol::{ClockTimes, Decoded, Decoder, Message, RawBoard, SquareIndex};
use boardcast_simulator::codes::{Physical, index_of, reading};
use shakmaty::san::San;
use shakmaty::{Chess, Color, KnownOutcome, Position, Role, Square};

/// The input, read a byte at a time; past the end every byte is 0.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&first, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        first
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The core, the decoder in front of it, and the board the decoded bytes describe.
struct Harness {
    core: BoardCore,
    decoder: Decoder,
    now: Duration,
    /// Every square as the decoded dumps and field updates set it.
    expected: RawBoard,
    /// Whether the board is read as occupancy only (legal moves then show as 0/1).
    occupancy_only: bool,
}

impl Harness {
    fn feed(&mut self, bytes: &[u8]) {
        self.decoder.feed(bytes);
        while let Some(decoded) = self.decoder.poll() {
            let Decoded::Message(message) = decoded else {
                continue;
            };
            match &message {
                Message::BoardDump(board) => self.expected = *board,
                Message::FieldUpdate { square, code } => self.expected.set(*square, *code),
                _ => {}
            }
            self.core.on_message(&message, self.now);
            self.drain();
        }
    }

    fn send(&mut self, message: Message) {
        self.feed(&message.encode());
    }

    fn drain(&mut self) {
        while self.core.poll_event().is_some() {}
        let _ = self.core.take_finished_games();
    }

    /// Advances time by `step`, running every timer due on the way at its deadline.
    fn advance(&mut self, step: Duration) {
        let until = self.now + step;
        while let Some(deadline) = self.core.next_deadline().filter(|d| *d <= until) {
            let at = deadline.max(self.now);
            self.core.tick(at);
            self.drain();
            if self.core.next_deadline() == Some(deadline) {
                panic!("the engine's deadline {deadline:?} did not move on after a tick");
            }
            self.now = at;
        }
        self.now = until;
        self.core.tick(until);
        self.drain();
    }

    /// Field updates that turn the board into the position after a legal move of the
    /// game, in an order the input picks.
    fn legal_move(&mut self, input: &mut Input) {
        let position = self.core.game().position().clone();
        let moves = position.legal_moves();
        if moves.is_empty() {
            return;
        }
        let mv = moves[usize::from(input.byte()) % moves.len()];
        let after = position.play(mv).expect("a legal move plays");
        let rotated = self.core.game_status().rotated;
        let target = Physical::from_board(after.board());
        let mut updates: Vec<(SquareIndex, u8)> = Square::ALL
            .into_iter()
            .filter_map(|sq| {
                let index = SquareIndex::new(index_of(sq, rotated) as u8)?;
                let code = reading(target.get(sq), self.occupancy_only);
                (self.expected.get(index) != code).then_some((index, code))
            })
            .collect();
        if !updates.is_empty() {
            let turn = usize::from(input.byte()) % updates.len();
            updates.rotate_left(turn);
        }
        let gap = Duration::from_millis(u64::from(input.byte()));
        for (square, code) in updates {
            self.send(Message::FieldUpdate { square, code });
            self.advance(gap);
        }
    }

    fn dump(&mut self, input: &mut Input) {
        let board = match input.byte() % 5 {
            0 => RawBoard::start_position(),
            1 => RawBoard::start_position().rotated(),
            2 => {
                let rotated = self.core.game_status().rotated;
                let physical = Physical::from_board(self.core.game().position().board());
                RawBoard(physical.to_hardware(rotated, self.occupancy_only))
            }
            3 => RawBoard::default(),
            _ => {
                let mut squares = [0u8; 64];
                for square in &mut squares {
                    *square = input.byte() & 0x0f;
                }
                RawBoard(squares)
            }
        };
        self.send(Message::BoardDump(board));
    }

    fn command(&mut self, input: &mut Input) {
        let command = match input.byte() % 6 {
            0 => BoardCommand::AcceptBoard,
            1 => BoardCommand::DeclareSetup,
            2 => BoardCommand::SetResult(match input.byte() % 4 {
                0 => None,
                1 => Some(KnownOutcome::Draw),
                2 => Some(KnownOutcome::Decisive {
                    winner: Color::White,
                }),
                _ => Some(KnownOutcome::Decisive {
                    winner: Color::Black,
                }),
            }),
            3 => BoardCommand::CorrectPromotion {
                ply: usize::from(input.byte()),
                role: [
                    Role::Queen,
                    Role::Rook,
                    Role::Bishop,
                    Role::Knight,
                    Role::Pawn,
                ][usize::from(input.byte()) % 5],
            },
            4 => BoardCommand::SetTags(vec![("White".into(), format!("P{}", input.byte()))]),
            _ => BoardCommand::SetTags(vec![("Result".into(), "1-0".into())]),
        };
        // Refusals are answers, not failures.
        let _ = self.core.apply(command);
        self.drain();
    }

    fn check(&self) {
        assert_eq!(
            self.core.mirror().board(),
            &self.expected,
            "the mirror is not the board the bytes describe"
        );
        check_legal(self.core.game());
    }
}

/// The record's SANs replayed from its start position: each must be legal there, and
/// the last position must be the record's.
fn check_legal(record: &GameRecord) {
    let mut position: Chess = record.start().clone();
    for (ply, san) in record.sans().iter().enumerate() {
        let mv = san
            .trim_end_matches(['+', '#'])
            .parse::<San>()
            .unwrap_or_else(|e| panic!("ply {}: SAN {san:?} does not parse: {e}", ply + 1))
            .to_move(&position)
            .unwrap_or_else(|e| panic!("ply {}: {san} is not legal: {e}", ply + 1));
        position = position.play(mv).expect("legal");
    }
    assert_eq!(
        position.board(),
        record.position().board(),
        "the moves do not lead to the record's position"
    );
    assert_eq!(position.turn(), record.position().turn());
}

/// Runs the program in `data` against a fresh core, checking after every operation;
/// returns how many moves the record holds at the end.
pub fn run(data: &[u8]) -> usize {
    let mut input = Input(data);
    let occupancy_only = input.byte() % 8 == 0;
    let config = EngineConfig {
        occupancy_only,
        ..EngineConfig::default()
    };
    let mut harness = Harness {
        core: BoardCore::new(config),
        decoder: Decoder::new(),
        now: Duration::ZERO,
        expected: RawBoard::default(),
        occupancy_only,
    };
    harness.send(Message::BoardDump(RawBoard::start_position()));
    while !input.is_empty() {
        match input.byte() % 8 {
            0 | 1 => harness.legal_move(&mut input),
            2 => {
                let square = SquareIndex::new(input.byte() % 64).expect("in range");
                let code = input.byte() & 0x7f;
                harness.send(Message::FieldUpdate { square, code });
            }
            3 => harness.dump(&mut input),
            4 => {
                let step = u64::from(input.byte()) * 8;
                harness.advance(Duration::from_millis(step));
            }
            5 => harness.command(&mut input),
            6 => {
                let mut payload = [0u8; 7];
                for byte in &mut payload {
                    *byte = input.byte() & 0x7f;
                }
                harness.send(Message::ClockTime(ClockTimes::from_payload(payload)));
            }
            _ => {
                let len = usize::from(input.byte() % 16);
                let bytes: Vec<u8> = (0..len).map(|_| input.byte()).collect();
                harness.feed(&bytes);
            }
        }
        harness.check();
    }
    harness.advance(Duration::from_secs(10));
    harness.check();
    harness.core.game().ply_count()
}
