//! Boards that end, restart or rewind the game rather than continue it: a result
//! signal, the start position (a new game), the board turned round, an earlier position
//! of this game (a takeback, or a repetition when moves reach it).

use shakmaty::{Board, Chess, Move, Position};

use super::analysis::{MAX_RECORDED_ROUNDS, sequences_of};
use super::candidates::Match;
use super::codes::{diff, from_board, from_hardware, move_squares, occupied, shows};
use super::config::Mode;
use super::engine::{Ambiguity, Engine};
use super::event::{Event, IrregularKind};
use super::search::{Explanation, explain};
use super::signals::signalled_result;
use crate::game::{GameRecord, Termination};

impl Engine {
    /// Result pieces or kings on the centre (see `signals`) end the game.
    pub(super) fn result_signal(&mut self) -> bool {
        if self.config.occupancy_only {
            return false;
        }
        let Some(outcome) = signalled_result(&self.observed) else {
            return false;
        };
        if !self.record.is_over() {
            self.record
                .set_result(Some((outcome, Termination::ResultSignal)));
            self.rebuild();
        }
        true
    }

    /// The start position, read either way round, starts a new game.
    pub(super) fn new_game(&mut self) -> bool {
        // The start position's occupied squares are the same either way round: a board
        // occupied elsewhere (almost every board analysed) is no start position.
        if occupied(&self.observed) != Board::default().occupied() {
            return false;
        }
        let occupancy = self.config.occupancy_only;
        let start = from_board(&Board::default(), occupancy);
        let normal = self.observed == start;
        // Occupancy of the start position looks the same both ways round.
        let turned =
            !normal && !occupancy && from_hardware(&self.raw, !self.rotated, false) == start;
        if !normal && !turned {
            return false;
        }
        if turned {
            self.turn_around();
        }
        let fresh =
            self.record.ply_count() == 0 && !self.record.is_setup() && !self.record.is_over();
        if fresh {
            self.rebuild();
        } else {
            self.start_game(GameRecord::new(), false);
        }
        true
    }

    /// After lost updates, a board the game does not explain but moves from the start
    /// position do is a new game begun while nothing was read (the start position
    /// hidden): a new game starts and the board is explained from there.
    pub(super) fn new_game_unseen(&mut self) -> bool {
        if !self.lost_updates || self.turn_open {
            return false;
        }
        let found = explain(
            &Chess::default(),
            &self.observed,
            self.evidence(),
            self.config.occupancy_only,
            self.config.max_search_plies,
            None,
        );
        if found == Explanation::Nothing {
            return false;
        }
        self.start_game(GameRecord::new(), false);
        // Still the board read after lost updates: an ambiguity from it binds.
        self.lost_updates = true;
        if self.tentative.is_none() && !self.explained(MAX_RECORDED_ROUNDS) {
            self.irregular(IrregularKind::NoLegalContinuation);
        }
        true
    }

    /// A board that only makes sense turned 180° (the same position, or one legal move
    /// from it) switches the reading.
    pub(super) fn turned_board(&mut self) -> bool {
        if self.config.occupancy_only {
            return self.turned_occupancy_board();
        }
        let alt = from_hardware(&self.raw, !self.rotated, false);
        let alt_diff = diff(&alt, &self.expected);
        let matched = match self.candidates.find(&alt, alt_diff, |_| true) {
            Match::One(i) => Some(i),
            _ => None,
        };
        if alt_diff.any() && matched.is_none() {
            return false;
        }
        self.turn_around();
        if let Some(i) = matched {
            self.commit(i);
        }
        true
    }

    /// An occupancy-only board's start position looks the same both ways round, so its
    /// orientation shows with the game's first move: a first move legal only in the
    /// turned reading turns the reading. Later, occupancy is too weak a sign (fast play
    /// can look like one turned move), so only the first move of a game from the start
    /// position counts; the reading then stays for the games after it.
    fn turned_occupancy_board(&mut self) -> bool {
        if self.record.ply_count() != 0 || self.record.is_setup() {
            return false;
        }
        let alt = from_hardware(&self.raw, !self.rotated, true);
        let alt_diff = diff(&alt, &self.expected);
        if !alt_diff.any() {
            return false;
        }
        if let Match::One(i) = self.candidates.find(&alt, alt_diff, |_| true) {
            self.turn_around();
            self.commit(i);
            return true;
        }
        // Several moves at once (a fast reply to the first move): White moved first, so
        // the squares that changed first are White's. If they all lie in what this
        // reading calls Black's half, the board stands the other way round; the moves
        // are then explained in the turned reading.
        let first = self.since.iter().flatten().min();
        let earliest = (0..64).filter(|&i| first.is_some() && self.since[i] == first.copied());
        let mut earliest = earliest.peekable();
        if earliest.peek().is_some() && earliest.all(|i| i >= 32) {
            self.turn_around();
        }
        false
    }

    fn turn_around(&mut self) {
        self.rotated = !self.rotated;
        self.history.turn();
        // Square s of one reading is square 63 - s of the other: the change times follow
        // the physical squares.
        self.since.reverse();
        self.changed_at.reverse();
        self.observed = from_hardware(&self.raw, self.rotated, self.config.occupancy_only);
        self.diff = diff(&self.observed, &self.expected);
        self.events.push_back(Event::OrientationChanged {
            rotated: self.rotated,
        });
    }

    /// The board shows an earlier position of this game.
    pub(super) fn takeback(&mut self) -> bool {
        let occupancy = self.config.occupancy_only;
        let on = occupied(&self.observed);
        let Some(ply) = (0..self.record.ply_count()).rev().find(|&k| {
            self.record
                .position_at(k)
                .is_some_and(|p| shows(&self.observed, on, p.board(), occupancy))
        }) else {
            return false;
        };
        if self.lost_updates && self.repeated_unseen(ply) {
            return true;
        }
        if self.reached_by_moves() {
            return false;
        }
        if self.repeated_unconfirmed() {
            return true;
        }
        // After lost updates, an earlier position no moves within the search reach may
        // as well have come back by more moves than it reaches (pieces gone away and
        // back: Ba7 Bf7 Bb8 Be6 while nothing was read, the board of 32 plies before)
        // as by a takeback: the moves read live are not retracted on that guess, the
        // board is the arbiter's (who can enter the moves or accept it).
        match self.config.mode {
            Mode::Casual if !self.lost_updates => self.retract_to(ply),
            _ => self.irregular(IrregularKind::Takeback),
        }
        true
    }

    /// Whether the board was reached by moves from the recorded position: a complete
    /// sequence of legal moves explains it and its pieces were lifted in the order it
    /// plays them. (An earlier position reached again so, a piece going back and forth,
    /// is a repetition, not a takeback: a takeback undoes the last move first, so its
    /// lifts come in the other order.)
    fn reached_by_moves(&self) -> bool {
        self.moves_reaching().is_some()
    }

    /// Whether moves from the recorded position explain the board whole: the only
    /// complete sequence that does, in the order of the lifts, every square it changes
    /// seen to change.
    pub(super) fn reached_whole(&self) -> bool {
        let Some(moves) = self.moves_reaching() else {
            return false;
        };
        let seen = self.seen();
        let mut pos = self.record.position().clone();
        moves.iter().all(|&mv| {
            let squares = move_squares(mv, pos.turn());
            pos.play_unchecked(mv);
            (squares & !seen).is_empty()
        })
    }

    /// The one complete sequence of legal moves from the recorded position that explains
    /// the board, its pieces lifted in the order it plays them, if there is one.
    fn moves_reaching(&self) -> Option<Vec<Move>> {
        if self.turn_open {
            return None;
        }
        let found = explain(
            self.record.position(),
            &self.observed,
            self.evidence(),
            self.config.occupancy_only,
            self.config.max_search_plies,
            None,
        );
        match found {
            Explanation::Found {
                moves,
                complete: true,
                ordered: true,
                ..
            } => Some(moves),
            _ => None,
        }
    }

    /// After lost updates nothing shows whether the earlier position at `ply` came back
    /// by a takeback or by moves made meanwhile (a repetition): when sequences of legal
    /// moves explain the board, they and the takeback are reported as ambiguous, and
    /// nothing is recorded until the arbiter picks. An ambiguity still open that the
    /// moves made start with (binding, or waiting for the arbiter: a takeback or moves
    /// made, withdrawn moves) stays the one reported: the board read since goes on from
    /// one of its lines, and the pick replays those readings. (Replaced by the search
    /// from the record, the line the moves went on from was lost once it grew past the
    /// search's depth: Ke7 Rb7+ Kf8 or a takeback of Rb8+, then Rb8+ Ke7 Rb7+ read,
    /// reported as Ke7 Rb7+ or a takeback of Kf8 Rb8+.)
    fn repeated_unseen(&mut self, ply: usize) -> bool {
        if self.turn_open {
            return false;
        }
        if self
            .ambiguity
            .as_ref()
            .is_some_and(|a| a.takeback.is_some() || a.hold || a.binding)
        {
            self.report_ambiguity(None);
            return true;
        }
        let occupancy = self.config.occupancy_only;
        let found = explain(
            self.record.position(),
            &self.observed,
            self.evidence(),
            occupancy,
            self.config.max_search_plies,
            None,
        );
        let mut sequences = sequences_of(found);
        // Only sequences that end on the board explain it (not a move in progress).
        sequences.retain(|moves| self.ends_on_board(self.record.position(), moves));
        let Some(plies) = sequences.first().map(Vec::len) else {
            return false;
        };
        let ambiguity = Ambiguity {
            sequences,
            correction: false,
            binding: true,
            takeback: Some(ply),
            hold: false,
            unread_tail: false,
        };
        self.report_ambiguity(Some((plies, ambiguity)));
        true
    }
}
