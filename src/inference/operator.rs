//! Operator actions: accepting the board's position, declaring a set-up position a new
//! game, picking one of several explanations of the board, entering moves from the
//! scoresheet or amending recorded ones with them, correcting a promotion piece,
//! entering a result.

use std::time::Duration;

use shakmaty::{Color, KnownOutcome, Move, Position, Role};

use super::candidates::Origin;
use super::codes::{occupied, shows};
use super::engine::{Engine, FirstLift};
use super::event::Event;
use super::legality::position_from_codes;
use crate::game::{GameRecord, RecordError, Termination, movetext};

/// Replaced games kept for a caller that does not take them.
const MAX_REPLACED_KEPT: usize = 16;

/// Why an operator action was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("an occupancy-only board does not show which pieces stand where")]
    OccupancyOnly,
    #[error("the board does not hold a legal position")]
    IllegalBoard,
    #[error("no ambiguity is open on this board (nothing to pick from)")]
    NoAmbiguity,
    #[error("{0} is not one of the explanations reported: {1}")]
    NotACandidate(String, String),
    #[error("the board does not show the position after {0}, nor one more move")]
    NotOnTheBoard(String),
    #[error("the board shows the recorded position: no moves to enter")]
    NothingToEnter,
    #[error("move {0} is not a promotion")]
    NotAPromotion(usize),
    #[error("ply {ply} is not recorded (the record holds {recorded} plies)")]
    NotRecorded { ply: usize, recorded: usize },
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Which of the sequences reported in an ambiguity the arbiter picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Its place in the list reported, from 0.
    Index(usize),
    /// Its moves in SAN as reported (check and mate marks may be left out).
    Moves(Vec<String>),
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Choice::Index(i) => write!(f, "explanation {i}"),
            Choice::Moves(moves) => write!(f, "{:?}", moves.join(" ")),
        }
    }
}

/// SAN moves without check and mate marks, for comparing an arbiter's entry.
fn plain<'a>(sans: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    sans.into_iter()
        .map(|san| san.trim_end_matches(['+', '#']))
        .collect()
}

impl Engine {
    /// Records the sequence `choice` picks among those the last ambiguity reported (the
    /// arbiter knows the order from the scoresheets; a dump cannot show it), then
    /// explains the board from there, as the players may have moved on meanwhile: the
    /// readings since the board first showed the picked position are replayed (see
    /// `replay`), so moves read one by one meanwhile are recorded in turn.
    /// Moves that are no reported sequence (none reported: a board left irregular by
    /// more moves lost than the search reaches) are the arbiter's entry from the
    /// scoresheets: recorded if legal and if the board follows from them (see `enter`).
    pub fn resolve(&mut self, choice: &Choice) -> Result<(), EngineError> {
        let reported = self.open_ambiguity();
        let index = match choice {
            Choice::Index(i) => Some(*i).filter(|&i| i < reported.len()),
            Choice::Moves(moves) => {
                let wanted = plain(moves.iter().flat_map(|m| m.split_whitespace()));
                reported
                    .iter()
                    .position(|sans| plain(sans.split_whitespace()) == wanted)
            }
        };
        let (Some(index), Some(ambiguity)) = (index, self.ambiguity.clone()) else {
            let not_a_candidate =
                || EngineError::NotACandidate(choice.to_string(), reported.join(" | "));
            return match (choice, reported.is_empty()) {
                (Choice::Moves(moves), _) => self.enter(moves).map_err(|e| match e {
                    EngineError::NotOnTheBoard(_) if !reported.is_empty() => not_a_candidate(),
                    e => e,
                }),
                (Choice::Index(_), true) => Err(EngineError::NoAmbiguity),
                (Choice::Index(_), false) => Err(not_a_candidate()),
            };
        };
        let count = reported.len();
        // The picked moves were played after the board showed the position they start
        // from: the one before the last move, for a correction of it.
        let played_after = self.sequences_shown(ambiguity.correction);
        match (ambiguity.sequences.get(index), ambiguity.takeback) {
            (Some(moves), _) => {
                self.record_sequence(moves, ambiguity.correction);
                // The arbiter's: not moves read after lost updates waiting to be confirmed.
                self.unconfirmed = None;
            }
            (None, Some(ply)) => self.retract_to(ply),
            (None, None) => {}
        }
        let ply = self.record.ply_count();
        self.record.add_comment(
            ply,
            format!(
                "{} picked by the arbiter among {count} explanations of the board",
                reported[index]
            ),
        )?;
        self.replay_since_shown(played_after);
        // A board that changed since is analysed when it is stable (the timer is set).
        if self.analysed && self.tentative.is_none() && self.diff.any() {
            self.analyse();
        }
        Ok(())
    }

    /// Records `moves` (SAN, from the scoresheets) after the last recorded move, for a
    /// board that does not show the recorded position: each must be legal, and the board
    /// must show their position or at most one more move of the side to move, complete
    /// or in progress (the players may have moved on), so a slip of the pen records
    /// nothing (longer explanations are not searched here: a wrong entry could fit one).
    fn enter(&mut self, moves: &[String]) -> Result<(), EngineError> {
        if !self.diff.any() {
            return Err(EngineError::NothingToEnter);
        }
        // The entered moves were played after the board showed the recorded position.
        let played_after = self.anchor;
        let entered = self.record_entry(moves)?;
        let ply = self.record.ply_count();
        let sans = self.record.sans()[ply - entered..].join(" ");
        self.record
            .add_comment(ply, format!("{sans} entered by the arbiter"))?;
        self.explain_after_entry(played_after);
        Ok(())
    }

    /// Replaces the recorded moves from ply `from` (1-based) on by `moves` (SAN, from
    /// the scoresheets), or adds them after the last recorded move when `from` is the ply
    /// after it: for a record that took a wrong move (a move read whole before updates
    /// were lost, taken for a slide's step and replaced by where the slide would have
    /// gone, say), or that misses moves no reading showed (moves made and taken back
    /// while the board went unread leave it as it stood; the game's remark `board not
    /// read for N s` says where). The moves after ply `from` - 1 are retracted and
    /// `moves` entered as `enter` does, so they must be legal and the board must follow
    /// from them; a board that shows the position before `from` follows only from moves
    /// that lead back to it. Tried on a copy: a refusal changes nothing.
    /// The mainline is replaced (a retraction, then the moves), never kept as a
    /// variation; the PGN says at the first replaced move what was recorded before.
    pub fn amend(&mut self, from: usize, moves: &[String]) -> Result<(), EngineError> {
        let recorded = self.record.ply_count();
        if from == 0 || from > recorded + 1 {
            return Err(EngineError::NotRecorded {
                ply: from,
                recorded,
            });
        }
        let mut trial = self.clone();
        let replaced = trial.record.sans()[from - 1..].join(" ");
        if from <= recorded {
            trial.retract_to(from - 1);
        }
        // As for an entry, the readings are replayed from a showing of the moves'
        // position only after the board showed the recorded one (the wrong moves'): a
        // bound later than the moves' start, so a replay may be left out (the board is
        // then explained from the moves' position at once), but none starts from an
        // earlier coincidence (see `replay_since_shown`).
        let played_after = trial.anchor;
        let back = !trial.diff.any();
        let entered = trial.record_entry(moves)?;
        if back && trial.diff.any() {
            return Err(EngineError::NotOnTheBoard(moves.join(" ")));
        }
        let sans = trial.record.sans()[from - 1..from - 1 + entered].join(" ");
        let remark = match replaced.is_empty() {
            true => format!(
                "{sans} entered by the arbiter from the scoresheet (from ply {from}), \
                 missing from the record"
            ),
            false => format!(
                "{sans} entered by the arbiter from the scoresheet, replacing {replaced} \
                 (from ply {from}), recorded before"
            ),
        };
        trial.record.add_comment(from, remark)?;
        trial.explain_after_entry(played_after);
        *self = trial;
        Ok(())
    }

    /// Records `moves` as `enter` takes them (see there), when they are legal and the
    /// board follows from them; returns how many plies were recorded.
    fn record_entry(&mut self, moves: &[String]) -> Result<usize, EngineError> {
        let text = moves.join(" ");
        let mut record = self.record.clone();
        let mut entered = Vec::new();
        for san in moves.iter().flat_map(|m| m.split_whitespace()) {
            entered.push(record.push_san(san)?.mv);
        }
        let mut trial = self.clone();
        trial.record_sequence(&entered, false);
        let partial =
            trial
                .candidates
                .partial(&trial.observed, trial.diff, trial.config.occupancy_only);
        let under_way = partial.iter().any(|&i| {
            trial
                .candidates
                .get(i)
                .is_some_and(|c| c.origin == Origin::Current)
        });
        if entered.is_empty() || (trial.diff.any() && trial.tentative.is_none() && !under_way) {
            return Err(EngineError::NotOnTheBoard(text));
        }
        self.record_sequence(&entered, false);
        self.unconfirmed = None;
        Ok(entered.len())
    }

    /// After the arbiter's entry, replays the readings since the board showed its
    /// position (`played_after`: when the board showed the one the moves were played
    /// from, or later) and analyses a board that changed since.
    fn explain_after_entry(&mut self, played_after: Duration) {
        self.replay_since_shown(played_after);
        if self.analysed && self.tentative.is_none() && self.diff.any() {
            self.analyse();
        }
    }

    /// Accepts the board as the game's position (re-anchor). An earlier position of the
    /// game is returned to; any other becomes a set-up position with the earlier moves
    /// quoted in a comment (so the PGN stays valid), the side to move taken from the
    /// first move made.
    pub fn accept_board(&mut self) -> Result<(), EngineError> {
        let occupancy = self.config.occupancy_only;
        let on = occupied(&self.observed);
        let n = self.record.ply_count();
        if let Some(ply) = (0..=n).rev().find(|&k| {
            self.record
                .position_at(k)
                .is_some_and(|p| shows(&self.observed, on, p.board(), occupancy))
        }) {
            if ply < n {
                self.retract_to(ply);
            }
            return Ok(());
        }
        if occupancy {
            return Err(EngineError::OccupancyOnly);
        }
        // The irregular change was most likely the move of the side to move, so the
        // other side is tried first; the first move made settles it anyway.
        let now_pos = self.record.position();
        let mover = now_pos.turn();
        let fullmoves = now_pos.fullmoves();
        let next = fullmoves.saturating_add(u32::from(mover == Color::Black));
        let pos = position_from_codes(&self.observed, !mover, Some(now_pos), next)
            .or_else(|| position_from_codes(&self.observed, mover, Some(now_pos), fullmoves))
            .ok_or(EngineError::IllegalBoard)?;
        let mut record = GameRecord::from_position(pos);
        for text in self.record.preface() {
            record.add_comment(0, text.clone())?;
        }
        let earlier = movetext(&self.record);
        let note = if earlier.is_empty() {
            "board re-anchored after an irregularity".to_string()
        } else {
            format!("board re-anchored after an irregularity; moves before: {earlier}")
        };
        record.add_comment(0, note)?;
        let fen = record.start_fen();
        self.replace_record(record, true);
        self.events.push_back(Event::Reanchored { fen });
        self.rebuild();
        Ok(())
    }

    /// Starts a new game from the position on the board; the side to move is taken
    /// from the first move made.
    pub fn declare_setup(&mut self) -> Result<(), EngineError> {
        if self.config.occupancy_only {
            return Err(EngineError::OccupancyOnly);
        }
        let one = std::num::NonZeroU32::MIN;
        let pos = position_from_codes(&self.observed, Color::White, None, one)
            .or_else(|| position_from_codes(&self.observed, Color::Black, None, one))
            .ok_or(EngineError::IllegalBoard)?;
        self.start_game(GameRecord::from_position(pos), true);
        Ok(())
    }

    /// Changes the piece a pawn promoted to at `ply` (1-based).
    pub fn correct_promotion(&mut self, ply: usize, piece: Role) -> Result<(), EngineError> {
        let Some(Move::Normal {
            role,
            from,
            capture,
            to,
            promotion: Some(_),
        }) = ply
            .checked_sub(1)
            .and_then(|i| self.record.moves().get(i))
            .map(|m| m.mv)
        else {
            return Err(EngineError::NotAPromotion(ply));
        };
        let old_san = self.record.moves()[ply - 1].san.to_string();
        let mv = Move::Normal {
            role,
            from,
            capture,
            to,
            promotion: Some(piece),
        };
        self.record.replace(ply, mv)?;
        let new_san = self.record.moves()[ply - 1].san.to_string();
        self.events.push_back(Event::MoveCorrected {
            ply,
            old_san,
            new_san,
        });
        if self.assumed_queen == Some(ply) {
            self.assumed_queen = None;
        }
        self.rebuild();
        Ok(())
    }

    /// Enters a result the board cannot show (resignation, agreed draw, time), or
    /// clears it with `None`.
    pub fn set_result(&mut self, outcome: Option<KnownOutcome>) {
        self.record
            .set_result(outcome.map(|o| (o, Termination::Operator)));
        self.rebuild();
    }

    /// Sets the annotation of the move at `ply` (a clock reading), replacing any.
    pub fn annotate(&mut self, ply: usize, text: Option<String>) -> Result<(), EngineError> {
        Ok(self.record.set_annotation(ply, text)?)
    }

    /// Adds a remark for the arbiter after the move at `ply` (before the first move for
    /// 0), e.g. that the board went unread.
    pub fn add_comment(&mut self, ply: usize, text: String) -> Result<(), EngineError> {
        Ok(self.record.add_comment(ply, text)?)
    }

    /// Sets a PGN tag of the current game (kept for the following games).
    pub fn set_tag(&mut self, name: &str, value: &str) {
        self.record.set_tag(name, value);
    }

    /// Starts `record` as a new game and reports it.
    pub(super) fn start_game(&mut self, record: GameRecord, setup: bool) {
        // Kept for whoever archives games (the board core takes one per NewGame); a
        // caller that never takes them keeps only the latest few.
        if self.replaced.len() == MAX_REPLACED_KEPT {
            self.replaced.pop_front();
        }
        let mut finished = self.record.clone();
        // Replaced by a game first read after lost updates, with no result: its last
        // moves may have been made while nothing was read. Its record says so rather
        // than ending silently short (an arbiter completes it from the scoresheet).
        let ply = finished.ply_count();
        if self.lost_updates && ply > 0 && !finished.is_over() {
            let note = "updates lost: the board was not read when this game ended or was \
                        replaced; moves after this one may be missing";
            let _ = finished.add_comment(ply, note);
        }
        // Its last moves were the fewest that explain a board read after lost updates,
        // and no move read since confirmed them: pieces may have gone away and back
        // meanwhile, other moves or another number of them (see `unconfirmed`). The
        // record says so (an arbiter checks them against the scoresheet); a game its
        // end decides (mate, stalemate) has confirmed its side to move.
        if self.unconfirmed.is_some_and(|u| u.ply < ply) && !finished.is_over() {
            let note = "unconfirmed: the moves since updates were lost are the fewest that \
                        explain the board read then, and no move read since confirmed them";
            let _ = finished.add_comment(ply, note);
        }
        self.replaced.push_back(finished);
        self.replace_record(record, setup);
        self.events.push_back(Event::NewGame { setup });
        self.rebuild();
    }

    fn replace_record(&mut self, mut record: GameRecord, turn_open: bool) {
        for (name, value) in self.record.tags() {
            record.set_tag(name, value);
        }
        self.last_status = record.status();
        self.record = record;
        self.unconfirmed = None;
        self.turn_open = turn_open;
        self.first_lift = FirstLift::NotYet;
        self.move_lift = FirstLift::NotYet;
        self.assumed_queen = None;
    }
}
