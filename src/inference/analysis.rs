//! What a stable board that matches no single move means. The explanations are tried
//! from the most specific and cheapest to the most general, and the first that fits
//! wins: result signal, new game, turned board, takeback (those four in `resets`), a
//! mistaken promotion piece, a move in progress, a sequence of moves (possibly with the
//! next one in progress: fast play or lost updates, see `search`), irregular.

use std::time::Duration;

use shakmaty::{CastlingSide, Chess, Move, Position, Role};

use super::candidates::{Candidate, Candidates, Match, Origin};
use super::codes::{Codes, EMPTY, diff, from_board, occupied, shows};
use super::engine::{Ambiguity, Engine, FirstLift, WrittenLine, closed};
use super::event::{Event, Fix, IrregularKind};
use super::legality::problems;
use super::pending::PendingMoves;
use super::search::{
    Evidence, Explanation, Extensions, MAX_COUNTED, capture_square, castles_after, explain,
    explain_beyond, extend, fresh_read_passed, landing, moved_elsewhere, slides_past,
    taken_like_its_twin,
};
use crate::game::san_plus_and_play;

/// How many times one stable board may be explained further after moves were recorded
/// from it (each round records at least one move).
pub(super) const MAX_RECORDED_ROUNDS: usize = 8;

/// What the comment on a move told from others by one reading of a piece taken at once
/// says, for the arbiter to check it against the scoresheet.
pub const READ_ONCE_REMARK: &str = "read only once before it was taken: check it";

/// `moves`, legal one after the other from `start`, in SAN separated by spaces: the
/// longest of `written` from the same start that they begin with is taken as it was
/// written, and only the moves after it are written.
fn write_line(written: &[WrittenLine], start: &Chess, moves: &[Move]) -> WrittenLine {
    let prior = written
        .iter()
        .filter(|w| moves.starts_with(&w.moves) && w.start == *start)
        .max_by_key(|w| w.moves.len());
    let (mut san, mut end, done) = match prior {
        Some(w) => (w.san.clone(), w.end.clone(), w.moves.len()),
        None => (String::new(), start.clone(), 0),
    };
    for &mv in &moves[done..] {
        if !san.is_empty() {
            san.push(' ');
        }
        san.push_str(&san_plus_and_play(&mut end, mv).to_string());
    }
    WrittenLine {
        start: start.clone(),
        moves: moves.to_vec(),
        san,
        end,
    }
}

/// Whether `other` is a capture by the piece that made capture `mv`, from the same
/// square to another: on an occupancy-only board both leave the same squares filled.
fn capture_twin(mv: Move, other: Move) -> bool {
    other.is_capture() && other.from() == mv.from() && other.to() != mv.to()
}

/// The capture recorded, `last`, beside the same piece's other capture (see
/// `capture_twin`): `found`'s sequences after `last` and `replaced`, from the position
/// before it, as one ambiguity; `None` unless `found` is ambiguous and `replaced` begins
/// with that other capture.
fn with_twin(last: Move, found: &Explanation, replaced: &Explanation) -> Option<Explanation> {
    let (
        Explanation::Ambiguous {
            plies,
            sequences,
            exhaustive,
            ..
        },
        Explanation::Found { moves, .. },
    ) = (found, replaced)
    else {
        return None;
    };
    if !moves.first().is_some_and(|&mv| capture_twin(last, mv)) {
        return None;
    }
    let mut all: Vec<Vec<Move>> = sequences
        .iter()
        .map(|s| std::iter::once(last).chain(s.iter().copied()).collect())
        .collect();
    all.push(moves.clone());
    Some(Explanation::Ambiguous {
        plies: plies + 1,
        sequences: all,
        exhaustive: *exhaustive,
        unread_tail: false,
    })
}

/// How many moves an explanation makes (none: more than any).
fn plies(found: &Explanation) -> usize {
    match found {
        Explanation::Nothing => usize::MAX,
        Explanation::Found { plies, .. } | Explanation::Ambiguous { plies, .. } => *plies,
    }
}

/// The sequences `found` offers (its shared moves when it found one).
pub(super) fn sequences_of(found: Explanation) -> Vec<Vec<Move>> {
    match found {
        Explanation::Nothing => Vec::new(),
        Explanation::Found { moves, .. } => vec![moves],
        Explanation::Ambiguous { sequences, .. } => sequences,
    }
}

/// `replaced`, the last move's replacements, offered beside the record's line (`last`
/// followed by `past`, or the lines `kept` from a doubt still open) as an ambiguity that
/// binds nothing: the record's line past the search was not weighed against them (see
/// `explained`).
fn doubt(
    replaced: Explanation,
    last: Move,
    past: Explanation,
    kept: Vec<Vec<Move>>,
) -> Explanation {
    let plies = plies(&replaced);
    let mut sequences = sequences_of(replaced);
    let record = sequences_of(past).into_iter().map(|s| {
        let mut line = vec![last];
        line.extend(s);
        line
    });
    for line in record.chain(kept) {
        if !sequences.contains(&line) {
            sequences.push(line);
        }
    }
    Explanation::Ambiguous {
        plies,
        sequences,
        exhaustive: false,
        unread_tail: false,
    }
}

/// Whether every sequence `found` offers begins with a move `first` accepts.
fn begins_with(found: &Explanation, first: impl Fn(&Move) -> bool) -> bool {
    match found {
        Explanation::Found { moves, .. } => moves.first().is_some_and(&first),
        Explanation::Ambiguous { sequences, .. } => {
            sequences.iter().all(|s| s.first().is_some_and(&first))
        }
        Explanation::Nothing => false,
    }
}

/// Whether `sequences` (two or more) play the same moves but for the piece a pawn
/// promotes to.
fn only_promotions_differ(sequences: &[Vec<Move>]) -> bool {
    let Some((first, rest)) = sequences.split_first() else {
        return false;
    };
    !rest.is_empty()
        && rest.iter().all(|s| {
            s.len() == first.len()
                && s.iter()
                    .zip(first)
                    .all(|(a, b)| a.from() == b.from() && a.to() == b.to() && a.role() == b.role())
        })
}

/// A board no sequence of moves explained, and the position it was searched from.
/// Whether a board is explained at all depends on nothing else (the order evidence only
/// ranks explanations), so a board that comes back unchanged (flicker, a piece lifted
/// and put back) is not searched again: that search is the engine's costliest work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Unexplained {
    observed: Codes,
    expected: Codes,
    ply: usize,
    last: Option<Move>,
}

impl Engine {
    /// Analyses the observed board, stable for the settle window and not a single move.
    pub(super) fn analyse(&mut self) {
        if self.result_signal() || self.new_game() || self.turned_board() || self.takeback() {
            return;
        }
        if closed(self.record.status()) {
            self.new_game_unseen();
            return;
        }
        if self.contradicted()
            || self.promotion_piece()
            || self.pending()
            || self.explained(MAX_RECORDED_ROUNDS)
            || self.explained_in_any_order()
            || self.new_game_unseen()
        {
            return;
        }
        self.irregular(IrregularKind::NoLegalContinuation);
    }

    /// What the board showed since the last recorded move, for the search.
    pub(super) fn evidence(&self) -> Evidence<'_> {
        self.evidence_from(self.anchor.saturating_sub(self.config.settle))
    }

    /// What the board showed, for a search of moves begun no earlier than `start`.
    fn evidence_from(&self, start: Duration) -> Evidence<'_> {
        Evidence {
            since: &self.since,
            seen: self.seen(),
            history: &self.history,
            start,
            readings: self.readings_from(),
            scan: self.config.settle,
            lost: self.lost_at.filter(|&t| t >= start),
            fresh: false,
            slack: if self.lift_slack {
                self.config.settle
            } else {
                Duration::ZERO
            },
        }
    }

    /// Whether the last of the record's `ply` moves was read whole and answered (the
    /// reply begun, read live) before updates were lost, none recorded since: it was
    /// made, so a board after lost updates that the record cannot explain is more moves
    /// than the search reaches, for the arbiter, not a correction of it (Be3 read, the
    /// king lifted for the reply, then five moves while nothing was read: not Kc6 Kc2 in
    /// place of Be3 with the bishop never moved).
    fn answered_before_lost(&self, ply: usize) -> bool {
        self.lost_updates && self.replied_when_lost && self.recorded_when_lost(ply)
    }

    /// Whether the last move recorded is a rook's move that castling from the position
    /// before makes too: the rook touched first (Art. 5.1(3)), the king crossing after it
    /// was recorded. Castling in its place is then tried, and taken when shorter: with
    /// the reply begun as the king lands, no board shows the castled position for the
    /// candidates to match, and the search from the record finds only the king walking
    /// round while the other side's pieces go away and back unseen (Rf1, then the king
    /// on g1 and b2's bishop lifted for Bxb2: not Nc6 Kf2 Ne7 Kg1).
    fn castling_begun(&self) -> bool {
        let n = self.record.ply_count();
        let Some(last) = self.record.moves().last().map(|m| m.mv) else {
            return false;
        };
        last.role() == Role::Rook
            && !last.is_capture()
            && n.checked_sub(1)
                .and_then(|i| self.record.position_at(i))
                .is_some_and(|before| {
                    CastlingSide::ALL
                        .into_iter()
                        .flat_map(|side| before.castling_moves(side))
                        .any(|mv| castles_after(last, mv))
                })
    }

    /// Whether the last move recorded is a capture after which the board is explained
    /// only ambiguously (on an occupancy-only board, by captures of the reply swapped
    /// within a scan elsewhere): the same piece's other capture may be the move made
    /// (see `explained`).
    fn last_capture_open(&self, found: &Explanation) -> bool {
        let guess = matches!(found, Explanation::Ambiguous { .. });
        guess
            && self
                .record
                .moves()
                .last()
                .is_some_and(|m| m.mv.is_capture())
    }

    /// Whether `found`, moves with a move in progress after them, has the last recorded
    /// move's piece in the hand, read on its landing square for less than a scan (a
    /// slide's step) and gone from there before the first of those moves' pieces left its
    /// square. A player moves again only after the reply, so the piece was taken off by
    /// the reply: a capture on the square the slide went on to, never read (Bf6+ slid
    /// over g5, the bishop taken first for Nxf6: not Bg5 Nf6 with the bishop held).
    fn last_piece_held_through_reply(&self, found: &Explanation) -> bool {
        let Explanation::Found {
            moves,
            complete: false,
            ..
        } = found
        else {
            return false;
        };
        let (Some(last), Some(first)) = (self.record.moves().last(), moves.first()) else {
            return false;
        };
        let (Move::Normal { to, .. }, Some(from)) = (last.mv, first.from()) else {
            return false;
        };
        let square = to.to_usize();
        let untouched = moves.iter().all(|m| m.from() != Some(to) && m.to() != to);
        if self.config.occupancy_only || !untouched || self.observed[square] != EMPTY {
            return false;
        }
        let scan = self.config.settle;
        let code = self.expected[square];
        let window = (self.previous_anchor, Duration::MAX);
        if self.history.stood(to, code, window, scan, false) {
            return false;
        }
        match (
            self.history.last_change(to, Duration::MAX),
            self.history.last_change(from, Duration::MAX),
        ) {
            (Some(gone), Some(left)) => gone + scan < left,
            _ => false,
        }
    }

    /// Whether candidate `c`, one move from the recorded position, is a move the board
    /// read whole after lost updates cannot be a snapshot of (see `fresh_read_passed`):
    /// the move made is then more moves, or other ones, the search is left to report.
    pub(super) fn contradicts_fresh_read(&self, c: &Candidate) -> bool {
        if !self.lost_updates || c.origin != Origin::Current || self.config.occupancy_only {
            return false;
        }
        let evidence = Evidence {
            fresh: self.recorded_when_lost(self.record.ply_count()),
            ..self.evidence()
        };
        !fresh_read_passed(self.record.position(), &self.observed, &evidence, &[c.mv])
    }

    /// Whether the record's first `ply` moves are all it held when updates were last lost.
    fn recorded_when_lost(&self, ply: usize) -> bool {
        self.lost_moves.len() == ply && self.kept_lost_moves()
    }

    /// Whether the record still begins with the moves it held when updates were last
    /// lost (none of them retracted or replaced since).
    pub(super) fn kept_lost_moves(&self) -> bool {
        let moves = self.record.moves();
        moves.len() >= self.lost_moves.len()
            && moves
                .iter()
                .zip(&self.lost_moves)
                .all(|(m, &lost)| m.mv == lost)
    }

    pub(super) fn retract_to(&mut self, ply: usize) {
        let retracted = self
            .record
            .truncate(ply)
            .into_iter()
            .map(|m| m.san.to_string())
            .collect();
        self.events
            .push_back(Event::MovesRetracted { ply, retracted });
        self.assumed_queen = self.assumed_queen.filter(|&p| p <= ply);
        self.unconfirmed = None;
        self.first_lift = FirstLift::NotYet;
        self.move_lift = FirstLift::NotYet;
        self.rebuild();
    }

    /// Retracts the last move, the readings since the position before it still counting
    /// from when that position was shown (as a correction's search counts them).
    fn withdraw_last(&mut self) {
        let anchor = self.previous_anchor;
        let lost_updates = self.lost_updates;
        self.retract_to(self.record.ply_count().saturating_sub(1));
        self.anchor = anchor;
        self.lost_updates = lost_updates;
    }

    /// The board is part-way through a legal move (or a correction of the last one).
    pub(super) fn pending(&mut self) -> bool {
        let mut partial =
            self.candidates
                .partial(&self.observed, self.diff, self.config.occupancy_only);
        let is_correction = |i: usize| {
            self.candidates
                .move_at(i)
                .is_some_and(|(_, origin)| origin == Origin::Correction)
        };
        if partial.iter().any(|&i| is_correction(i)) && self.replied() {
            partial.retain(|&i| !is_correction(i));
        }
        // A piece in the hand (j'adoube, even of a piece that has no legal move) is a
        // normal transient, not a change of position.
        let lifted = self
            .diff
            .single_square()
            .is_some_and(|sq| self.observed[sq.to_usize()] == EMPTY);
        if partial.is_empty() && !lifted {
            return false;
        }
        // A board only part-way to replacing the last move that moves made since explain
        // whole is those moves (the reply made and a piece moved back: Rab1 Qa3 Ra1 is
        // also the queen's move from b3 to a3 in place of the last move, the rook it made
        // not yet put back).
        let corrections = partial.iter().all(|&i| is_correction(i));
        if !partial.is_empty()
            && !lifted
            && corrections
            && (self.reached_whole() || self.continued())
        {
            return false;
        }
        let candidates = self.candidates.pending(&partial, self.record.position());
        self.events.push_back(Event::Pending { candidates });
        true
    }

    /// On an occupancy-only board, whether moves from the recorded position explain the
    /// board one way, if with a move in progress after them (Rxe1 swapped within a scan,
    /// then the queen lifted from e3 for Qxe1#: not the queen taking on g1 in place of
    /// Re1+, the rook on e1 not yet put back on e2).
    fn continued(&self) -> bool {
        if !self.config.occupancy_only {
            return false;
        }
        matches!(self.searched_on_occupancy(), Explanation::Found { .. })
    }

    /// On an occupancy-only board nothing explains, the search again with each move's
    /// piece read leaving up to a scan before the previous move's: readings of one
    /// moment come a scan apart (Bxa5 bxa5 a4, the pawn on a3 read lifted a scan before
    /// the pawn on b6 that took swapped within a scan: not irregular for the rest of the
    /// game). Only then, and only when it explains the board one way: where the order
    /// read explains the board, it is the evidence, and sequences it rules out, once
    /// carried as an ambiguity, would leave the moves made behind.
    fn explained_in_any_order(&mut self) -> bool {
        if !self.config.occupancy_only || self.lost_updates {
            return false;
        }
        self.lift_slack = true;
        let explained = matches!(self.searched_on_occupancy(), Explanation::Found { .. }) && {
            let unexplained = self.unexplained.take();
            let explained = self.explained(MAX_RECORDED_ROUNDS);
            if !explained {
                self.unexplained = self.unexplained.take().or(unexplained);
            }
            explained
        };
        self.lift_slack = false;
        explained
    }

    /// Moves made faster than the settle window or while updates were lost: the moves
    /// every shortest explanation shares are recorded, then the rest of the board is
    /// analysed again (`rounds` bounds that). A board the recorded position cannot
    /// explain may still be explained with the last move replaced (a correction after the
    /// reply began).
    pub(super) fn explained(&mut self, rounds: usize) -> bool {
        if self.turn_open || rounds == 0 {
            return false;
        }
        let key = Unexplained {
            observed: self.observed,
            expected: self.expected,
            ply: self.record.ply_count(),
            last: self.record.moves().last().map(|m| m.mv),
        };
        if self.unexplained.as_ref() == Some(&key) {
            return false;
        }
        let occupancy = self.config.occupancy_only;
        // On an occupancy-only board a capture swapped within a scan leaves its target
        // open until later moves decide it, so the search reaches further back; the
        // order of the lifts keeps it narrow (only pieces seen leaving, in turn).
        let depth = if occupancy {
            self.config.max_search_plies + 2
        } else {
            self.config.max_search_plies
        };
        if occupancy && self.carried(rounds, false, false) {
            return true;
        }
        let mut correction = false;
        let n = self.record.ply_count();
        let evidence = Evidence {
            fresh: self.recorded_when_lost(n),
            ..self.evidence()
        };
        let mut found = explain(
            self.record.position(),
            &self.observed,
            evidence,
            occupancy,
            depth,
            None,
        );
        // A last move whose rest was not read may have gone on while the link was down:
        // the board read after it is then explained with that move's piece taken on
        // from the same square, when that takes fewer moves than explaining it after
        // the move (a slide cut off, then finished: Rd7 read, then Rd8; not Rd7 and a
        // round trip of the other side). Another piece is no such slide (exd5 read
        // whole is not Nc3 with a capture in progress).
        let held = self.last_piece_held_through_reply(&found);
        let twin_open = occupancy && self.last_capture_open(&found);
        let retry = found == Explanation::Nothing && !self.answered_before_lost(n)
            || self.lost_updates && self.rest_unread
            || held
            || twin_open
            || self.castling_begun();
        if retry && let Some(previous) = n.checked_sub(1).and_then(|i| self.record.position_at(i)) {
            let last = self.record.moves()[n - 1].mv;
            // The replaced move was begun before the last one was recorded, after the
            // position it replaces was first shown: a piece lifted earlier in the game
            // is no evidence of it. The board read whole after lost updates is a snapshot
            // of the moves replacing it, whether the last move was recorded from that
            // read or before the link went down (Be6 read resting, then Nf5 Bxf5 Qxf5
            // Qd7 while nothing was read: not Bf5 in its place, which never stood there).
            let before_last = Evidence {
                fresh: self.recorded_when_lost(n - 1) || self.recorded_when_lost(n),
                ..self.evidence_from(self.previous_anchor.saturating_sub(self.config.settle))
            };
            let mut replaced = explain(
                previous,
                &self.observed,
                before_last,
                occupancy,
                depth,
                Some(last),
            );
            // The replacement takes the last move's piece on: to another square, or as
            // the rook of castling begun with it (see `castling_begun`).
            let went_on =
                |mv: &Move| moved_elsewhere(last, *mv).is_some() || castles_after(last, *mv);
            // Its piece was read leaving its square first, before the link went down: a
            // replacement begun by another piece (g3 Qf6 Rd7 for the rook read on its way
            // b7-c7 and then on d7) contradicts that reading. (Castling with that rook,
            // the king moved while nothing was read, begins with it too.)
            let left = last.from();
            let begun = |mv: &Move| match *mv {
                Move::Castle { rook, .. } => Some(rook) == left,
                _ => mv.from() == left,
            };
            if self.lost_updates && self.rest_unread {
                replaced = self.begun_by(previous, replaced, begun);
            }
            let slide = begins_with(&replaced, went_on);
            let whole = matches!(replaced, Explanation::Found { complete: true, .. });
            // A slide cut off while its rest went unread is one move where the record
            // has two (Qc2 read on the way d1-b3, then c4: Qb3 c4, not Qc2 c4 Qb3): it is
            // taken when it explains the board in no more moves after the position before
            // than the record does after the last move. Only where the board shows a
            // slide: the piece read on its square within a scan of leaving its own, never
            // in the hand, and taken on past it along the same line (not Rfe1 set down
            // after 880 ms in the hand, then Rfc1; not Kd1 replaced by Ke1).
            let cut_off = self.lost_updates
                && self.in_stride
                && begins_with(&replaced, |mv: &Move| slides_past(last, *mv));
            let shorter =
                plies(&replaced) < plies(&found) || cut_off && plies(&replaced) == plies(&found);
            // Or as long past the last move, and begun in the order the pieces were lifted
            // where the record's line is not: that one holds the piece taken on through
            // the reply (the king of castling begun with the rook, lifted before the
            // reply and put down as it began: Rf8 with Bd3 and the king in the hand, for
            // O-O Bd3 with the king lifted again).
            let in_order = |e: &Explanation| matches!(e, Explanation::Found { ordered: true, .. });
            let reordered = matches!(found, Explanation::Found { .. })
                && plies(&replaced) == plies(&found) + 1
                && in_order(&replaced)
                && !in_order(&found);
            if found == Explanation::Nothing
                || slide && (shorter || reordered)
                || held && slide && whole
            {
                // After lost updates the record's line may only be past the search (Rg2
                // read landing, then Rg4 Rf2 Rg6+ Kf5 Rg5+ while nothing was read: Rf2
                // Rg4 Kf5 Rg5+ in its place is shorter, and the longer line is never
                // weighed): a replacement found for want of any other is then left to
                // the arbiter beside the record's line found two plies deeper. So is any
                // replacement while the players go on before the arbiter comes, with the
                // record's lines found since the loss still open (such a doubt, or the
                // lines it gave way to for a piece read lifted next: Kf5 in the hand,
                // then Ke4 Rg4+ and the king lifted again is Rf2 Rg4 with the king in
                // the hand, shorter than any line the record's move begins, and as
                // wrong).
                let unweighed = found == Explanation::Nothing
                    && self.lost_updates
                    && replaced != Explanation::Nothing;
                let kept = self.doubted_line(last);
                let doubted =
                    self.lost_updates && replaced != Explanation::Nothing && !kept.is_empty();
                let record = match unweighed {
                    true => explain(
                        self.record.position(),
                        &self.observed,
                        evidence,
                        occupancy,
                        depth + 2,
                        None,
                    ),
                    false => std::mem::replace(&mut found, Explanation::Nothing),
                };
                found = match unweighed && record != Explanation::Nothing || doubted {
                    true => doubt(replaced, last, record, kept),
                    false => replaced,
                };
                correction = true;
            } else if twin_open
                && !whole
                && plies(&replaced) == plies(&found)
                && let Some(both) = with_twin(last, &found, &replaced)
            {
                // The capture recorded leaves the reply ambiguous (captures swapped
                // within a scan elsewhere, none read landing: Qxb2 then Qxf5 or Qxg6)
                // while the same piece's other capture explains the board as far, with
                // the reply read under way (Qxc6, then Qxc6 own piece first). Both leave
                // the same occupancy and the flicker that read as the recorded capture's
                // landing reads as well as a victim taken off: the capture is withdrawn
                // and all are reported, for the moves after or the arbiter to decide.
                found = both;
                correction = true;
            }
        }
        // Nothing within the search's depth, from the record or in place of its last
        // move, with no ambiguity open that binds: a burst of moves the board read being
        // made may be longer (c6 Qb3 Be7 e4 reported with the knight in the hand, then
        // Nf6 read landing; its moves must still start with a line reported).
        if found == Explanation::Nothing
            && !occupancy
            && self.ambiguity.as_ref().is_none_or(|a| !a.binding)
        {
            found = explain_beyond(self.record.position(), &self.observed, evidence, depth);
            correction = false;
        }
        match found {
            // On a board that reads pieces, the moves made since a binding ambiguity whose
            // sequences end alike (no later board tells them apart) grow past the search
            // when the players go on before the arbiter comes: its sequences are carried.
            Explanation::Nothing if self.carried_past_search(rounds, false) => true,
            // The one explanation, a move in progress after moves begun out of the order
            // their pieces were lifted, beside an open ambiguity (its search cut at the
            // budget, so binding nothing) whose sequences the moves read since carry on to
            // the board whole: those are the moves made (Nxa5 Nxa5 dxc5 Qc7 reported, then
            // Nd4: not dxc5 Nd4 Nbxd4 Qc7 with the knight on f3 in the hand).
            Explanation::Found {
                complete: false,
                ordered: false,
                ..
            } if !occupancy && self.ambiguity.is_some() && self.carried(rounds, true, false) => {
                true
            }
            Explanation::Nothing if occupancy && self.recaptured(rounds) => true,
            Explanation::Nothing => {
                self.unexplained = Some(key);
                false
            }
            // A move read since moves were recorded from a board read after lost updates,
            // fitted only with moves never read while the link was up: those moves were
            // wrong (see `unconfirmed`).
            Explanation::Found { ref moves, .. }
                if self.unseen_fit(std::slice::from_ref(moves), correction) =>
            {
                self.withdraw();
                true
            }
            Explanation::Ambiguous { ref sequences, .. }
                if self.unseen_fit(sequences, correction) =>
            {
                self.withdraw();
                true
            }
            Explanation::Found { moves, plies, .. }
                if self
                    .ambiguity
                    .as_ref()
                    .is_some_and(|a| a.contradicts(&moves, plies, correction)) =>
            {
                // The moves made start with one of the sequences reported: a shorter
                // explanation that agrees with none of them is wrong (more moves were
                // made than it counts). Still ambiguous, unless the sequences carried
                // on explain the board (h8=Q+ Bxh8 or h8=N Bxh8, then Rxh8+ Kg7: not
                // Rxg7 Kxg7 h8=R from the record).
                if !self.carried_past_search(rounds, true) {
                    self.report_ambiguity(None);
                }
                true
            }
            // The one explanation, a move in progress after its moves, one of whose moves
            // put a piece on a square the board never read changing, where it stood
            // through the reply: the board has not shown it (two knights of either side
            // read lifted in one scan: Nd6 Nc8 with Nxc8 under way, the knight on d6
            // never read while Black moved). The board is part-way: nothing is recorded
            // until it shows more.
            Explanation::Found {
                ref moves,
                plies,
                complete: false,
                ..
            } if moves.len() == plies && self.lands_unread(moves, correction) => {
                self.pending_sequence(moves, correction);
                true
            }
            Explanation::Found {
                moves,
                complete,
                read_once,
                ..
            } => {
                let lost_updates = self.lost_updates;
                self.record_sequence(&moves, correction);
                if read_once {
                    self.note_read_once(&moves);
                }
                // What is left to explain is still the board read after lost updates:
                // an ambiguity in it binds.
                self.lost_updates = lost_updates && !complete;
                if !complete
                    && self.tentative.is_none()
                    && self.diff.any()
                    && !self.pending()
                    && !self.explained(rounds - 1)
                {
                    self.irregular(IrregularKind::NoLegalContinuation);
                }
                true
            }
            Explanation::Ambiguous {
                plies,
                sequences,
                exhaustive,
                unread_tail,
            } => {
                let mut new = Ambiguity {
                    sequences,
                    correction,
                    binding: false,
                    takeback: None,
                    hold: false,
                    unread_tail,
                };
                // Only the sequences that agree with an ambiguity still open can be the
                // moves made.
                let mut bound = false;
                if let Some(open) = &self.ambiguity {
                    new.sequences
                        .retain(|s| !open.contradicts(s, s.len(), correction));
                    bound = open.binding;
                }
                // The moves made start with one of the sequences if the search found
                // them all and the board was read whole after lost updates, an open
                // ambiguity binds them, they only differ in a promoted piece (the board
                // showed every move; which piece the pawn became was never read), they
                // all end in the same position (no later board can tell them apart), or on
                // an occupancy-only board, where they differ in captures that leave the
                // same occupancy (a capture swapped within a scan): a later board that a
                // shorter sequence explains otherwise (the true one grown past the
                // search depth) must not be recorded from it.
                new.binding = exhaustive
                    && (self.lost_updates
                        || occupancy
                        || bound
                        || only_promotions_differ(&new.sequences)
                        || self.end_alike(&new));
                // A binding ambiguity is only replaced by every sequence that agrees with
                // it: some of them, cut at the search's cap, may leave the moves made out.
                let kept = !new.sequences.is_empty() && (exhaustive || !bound);
                // On an occupancy-only board every sequence replacing the last move says
                // it was not made (a capture read on a square that flickered, the one
                // taken swapped within a scan): it leaves the record until they are
                // decided, the arbiter's pick or the moves that follow (no move of the
                // game stays recorded that the board contradicts).
                if kept && occupancy && correction && self.unconfirmed.is_none() {
                    self.withdraw_last();
                    new.correction = false;
                }
                // Sequences the open ambiguity rules out leave it open, carried on when
                // its own sequences explain the board.
                if !kept && self.carried_past_search(rounds, true) {
                    return true;
                }
                self.report_ambiguity(Some((plies, new)).filter(|_| kept));
                self.drop_contradicted_tentative();
                true
            }
        }
    }

    /// Whether one of `moves` (from the recorded position, or the one before it when
    /// `correction`) put a piece on a square the board never read changing since it
    /// showed that position, and the move after it (a reply) did not take it there:
    /// that piece stood through the reply unread. A piece placed and taken at once,
    /// within a scan, is often never read (c4 with dxc4 under way, the pawn on c4
    /// removed first); one standing while the other side makes a whole move is. The
    /// last of them leaves its piece to the move in progress after it, which can only
    /// take it. (After lost updates every square counts as changed: see `updates_lost`.
    /// Occupancy-only boards have their own landing rules.)
    fn lands_unread(&self, moves: &[Move], correction: bool) -> bool {
        let Some(start) = self.sequences_start(correction) else {
            return false;
        };
        if self.config.occupancy_only {
            return false;
        }
        let seen = self.seen_since(self.sequences_shown(correction));
        let mut pos = start.clone();
        moves.iter().enumerate().any(|(i, &mv)| {
            let unread = landing(mv, pos.turn()) & !seen;
            pos.play_unchecked(mv);
            moves.get(i + 1).is_some_and(|&reply| {
                let taken = capture_square(reply);
                unread.into_iter().any(|sq| taken != Some(sq))
            })
        })
    }

    /// Reports the board as part-way through `moves` (the first replacing the last
    /// move when `correction`): their first move is pending.
    fn pending_sequence(&mut self, moves: &[Move], correction: bool) {
        let origin = match correction {
            true => Origin::Correction,
            false => Origin::Current,
        };
        let (Some(&first), Some(start)) = (moves.first(), self.sequences_start(correction)) else {
            return;
        };
        let mut candidates = PendingMoves::with_capacity(1);
        candidates.push(first, origin, start);
        self.events.push_back(Event::Pending { candidates });
    }

    /// `found` (sequences from `start`) without those whose first move is not `first`:
    /// one left is the explanation, complete when the board shows its position.
    fn begun_by(
        &self,
        start: &Chess,
        found: Explanation,
        first: impl Fn(&Move) -> bool,
    ) -> Explanation {
        let begun = |moves: &Vec<Move>| moves.first().is_some_and(&first);
        match found {
            Explanation::Found { ref moves, .. } if !begun(moves) => Explanation::Nothing,
            Explanation::Ambiguous {
                plies,
                mut sequences,
                exhaustive,
                unread_tail,
            } => {
                sequences.retain(begun);
                match sequences.len() {
                    0 => Explanation::Nothing,
                    1 => {
                        let moves = sequences.swap_remove(0);
                        Explanation::Found {
                            complete: self.ends_on_board(start, &moves),
                            moves,
                            plies,
                            ordered: false,
                            read_once: false,
                        }
                    }
                    _ => Explanation::Ambiguous {
                        plies,
                        sequences,
                        exhaustive,
                        unread_tail,
                    },
                }
            }
            found => found,
        }
    }

    /// The record's lines, `last` first, of the open ambiguity (see `doubt`): those of one
    /// that doubts a correction of `last`, or every sequence of one from the recorded
    /// position that binds nothing (a board read since the doubt, a piece lifted for the
    /// next move, explained by the record's line alone). The doubt holds while the
    /// players go on. (A binding one already refuses a correction: see
    /// `Ambiguity::contradicts`.)
    fn doubted_line(&self, last: Move) -> Vec<Vec<Move>> {
        match &self.ambiguity {
            Some(open) if open.correction => open
                .sequences
                .iter()
                .filter(|s| s.first() == Some(&last))
                .cloned()
                .collect(),
            Some(open) if !open.binding && open.takeback.is_none() && !open.hold => open
                .sequences
                .iter()
                .map(|s| std::iter::once(last).chain(s.iter().copied()).collect())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The position an ambiguity's sequences start from: the one recorded, or the one
    /// before the last move when they replace it (`correction`).
    fn sequences_start(&self, correction: bool) -> Option<&Chess> {
        match correction {
            true => self
                .record
                .ply_count()
                .checked_sub(1)
                .and_then(|i| self.record.position_at(i)),
            false => Some(self.record.position()),
        }
    }

    /// When the board first showed the position the sequences start from (see
    /// `sequences_start`): the last move's, or the one before it for a correction.
    pub(super) fn sequences_shown(&self, correction: bool) -> Duration {
        match correction {
            true => self.previous_anchor,
            false => self.anchor,
        }
    }

    /// Whether the sequences of `ambiguity` all end in the same position (a pawn's one
    /// step captured at once and its two steps taken en passant; moves made in another
    /// order), so that the moves made next can never tell them apart.
    fn end_alike(&self, ambiguity: &Ambiguity) -> bool {
        let Some(start) = self.sequences_start(ambiguity.correction) else {
            return false;
        };
        let end = |moves: &Vec<Move>| {
            let mut pos = start.clone();
            moves.iter().for_each(|&mv| pos.play_unchecked(mv));
            (pos.board().clone(), pos.turn())
        };
        let mut ends = ambiguity.sequences.iter().map(end);
        ends.next().is_some_and(|first| ends.all(|e| e == first))
    }

    /// On an occupancy-only board (on one that reads pieces: sequences that end alike, once
    /// the search from the recorded position finds nothing) the sequences of a binding
    /// ambiguity are hypotheses carried across the moves that follow: the moves made
    /// start with one of them, so each is extended by the fewest moves (up to the search
    /// depth) that explain the board, and those that cannot be are dropped. (A search from
    /// the last recorded position would miss the true sequence once it grows past its
    /// depth, and a shorter one, a piece in the hand, would fit.) What every surviving
    /// sequence starts with is recorded; while they differ after it, the board is
    /// ambiguous and they stay open.
    /// So are the sequences of an ambiguity whose moves in progress were never read
    /// under way (`unread_tail`), once the search from the recorded position finds
    /// nothing: only by moves after them, their move in progress finished since (its
    /// pieces read landing: they were in the hand, not taken) and any move still in
    /// progress read under way. (The board read after lost updates with O-O in the hand
    /// and then castled and moved on past the search's depth: Ba4 Nf6 O-O Be7 Re1.)
    /// False when no sequence explains the board (none open, or a board part-way).
    /// With `whole`, any open ambiguity is carried, but only by extensions that show the
    /// board whole, every one of them found. With `held`, the board was read unchanged
    /// for the hold window: a piece in the hand was put down (see `extend`).
    pub(super) fn carried(&mut self, rounds: usize, whole: bool, held: bool) -> bool {
        let Some(open) = self
            .ambiguity
            .clone()
            .filter(|a| (a.binding || a.unread_tail || whole) && a.takeback.is_none() && !a.hold)
        else {
            return false;
        };
        let Some(from) = self.sequences_start(open.correction).cloned() else {
            return false;
        };
        // A hypothesis no longer legal from where it starts has no extension.
        let legal = self.checked.legal(&from, &open.sequences);
        let anchor = self.sequences_shown(open.correction);
        let evidence = self.evidence_from(anchor.saturating_sub(self.config.settle));
        let mut extensions = Extensions::default();
        let mut exhaustive = true;
        for (hypothesis, _) in open.sequences.iter().zip(legal).filter(|(_, legal)| *legal) {
            let extra = self.config.max_search_plies;
            let (found, all) = extend(
                &from,
                &self.observed,
                evidence,
                self.config.occupancy_only,
                hypothesis,
                extra,
                held,
            );
            exhaustive &= all;
            if (open.unread_tail || whole) && !all {
                // Extensions the search did not reach may start otherwise.
                return false;
            }
            let beyond = |s: &[Move], read: bool| read && s.len() > hypothesis.len();
            let shown = |s: &[Move]| !whole || self.ends_on_board(&from, s);
            extensions.add(found, |s, read| {
                (!open.unread_tail || beyond(s, read)) && shown(s)
            });
        }
        let survivors = extensions.into_moves(self.config.occupancy_only);
        if held && survivors == open.sequences {
            // Nothing put down: the ambiguity stands as reported.
            return false;
        }
        let Some(first) = survivors.first().cloned() else {
            return false;
        };
        let shared = (0..first.len())
            .take_while(|&i| survivors.iter().all(|s| s.get(i) == first.get(i)))
            .count();
        self.record_sequence(&first[..shared], open.correction);
        if shared > 0 {
            self.anchor_where_shown();
        }
        let rest: Vec<Vec<Move>> = survivors.iter().map(|s| s[shared..].to_vec()).collect();
        if rest.iter().any(Vec::is_empty) {
            // One of them ends here (the board shows its position, or a move of it in
            // progress): analysed from the position recorded.
            if self.tentative.is_none()
                && self.diff.any()
                && !self.pending()
                && !self.explained(rounds - 1)
            {
                self.irregular(IrregularKind::NoLegalContinuation);
            }
            return true;
        }
        // (Moves after sequences that bound nothing bind nothing either.)
        let ambiguity = Ambiguity {
            binding: open.binding && exhaustive && rest.len() < MAX_COUNTED,
            sequences: rest,
            correction: open.correction && shared == 0,
            takeback: None,
            hold: false,
            unread_tail: false,
        };
        let plies = ambiguity.sequences[0].len();
        self.report_ambiguity(Some((plies, ambiguity)));
        self.drop_contradicted_tentative();
        true
    }

    /// On a board that reads pieces, whether the open ambiguity's sequences, ending
    /// alike or with moves in progress never read under way, were carried on to explain
    /// the board where the search from the recorded position explained it not at all,
    /// or only by lines they rule out (`ruled_out`): those moves grow past the search's
    /// depth. The latter only on readings without a gap since the sequences' start:
    /// every move added was then read, in turn, where after lost updates the fewest
    /// moves added may be a round trip nothing read (a knight read going back, after a
    /// dump, is not the other side's knight away and back unseen).
    fn carried_past_search(&mut self, rounds: usize, ruled_out: bool) -> bool {
        let Some(open) = self.ambiguity.as_ref() else {
            return false;
        };
        let shown = self.sequences_shown(open.correction);
        !self.config.occupancy_only
            && (open.unread_tail || self.end_alike(open))
            && (!ruled_out
                || self
                    .evidence_from(shown.saturating_sub(self.config.settle))
                    .continuous())
            && self.carried(rounds, false, false)
    }

    /// Whether `moves`, legal one after the other from `from`, end on the observed board
    /// (not part-way through a move).
    pub(super) fn ends_on_board(&self, from: &Chess, moves: &[Move]) -> bool {
        let mut pos = from.clone();
        moves.iter().for_each(|&mv| pos.play_unchecked(mv));
        let occupancy = self.config.occupancy_only;
        shows(
            &self.observed,
            occupied(&self.observed),
            pos.board(),
            occupancy,
        )
    }

    /// A move waiting out its settle window that the ambiguity just reported contradicts
    /// is not recorded: the board it showed is one of the ambiguity's, for the later
    /// moves or the arbiter to decide.
    fn drop_contradicted_tentative(&mut self) {
        if self
            .tentative
            .is_some_and(|t| self.contradicts_ambiguity(t.index))
        {
            self.tentative = None;
        }
    }

    /// Reports `new` as the open ambiguity, or the one still open again (the board is
    /// still ambiguous, though further on).
    pub(super) fn report_ambiguity(&mut self, new: Option<(usize, Ambiguity)>) {
        let plies = match new {
            Some((plies, ambiguity)) => {
                self.ambiguity = Some(ambiguity);
                plies
            }
            None => self
                .ambiguity
                .as_ref()
                .and_then(|a| a.sequences.first())
                .map_or(0, Vec::len),
        };
        let candidates = self.written_ambiguity();
        if candidates.is_empty() && self.ambiguity.as_ref().is_some_and(|a| a.hold) {
            // Withdrawn moves no sequence within the search explains: still irregular.
            self.irregular(IrregularKind::NoLegalContinuation);
            return;
        }
        let replaces = self
            .ambiguity_replaces_last()
            .then(|| self.record.moves().last().map(|m| m.san.to_string()))
            .flatten();
        self.events.push_back(Event::Ambiguous {
            plies,
            explanations: candidates.len(),
            candidates,
            replaces,
        });
    }

    /// The candidate sequences (SAN) of the ambiguity still open, as last reported:
    /// what `resolve` picks from. Empty when none is open.
    pub fn open_ambiguity(&self) -> Vec<String> {
        self.ambiguity_lines(&[]).0
    }

    /// `open_ambiguity` for a report, the SAN written last time kept for the moves the
    /// sequences then had: a carried ambiguity grows a move at a time, and writing a
    /// hundred plies again at every board read was a visible share of such a game's
    /// time.
    fn written_ambiguity(&mut self) -> Vec<String> {
        let (reported, lines) = self.ambiguity_lines(&self.written);
        self.written = lines;
        reported
    }

    /// The candidates of the ambiguity still open (see `open_ambiguity`), and its
    /// sequences as written (see `write_line`).
    fn ambiguity_lines(&self, written: &[WrittenLine]) -> (Vec<String>, Vec<WrittenLine>) {
        let Some(ambiguity) = &self.ambiguity else {
            return (Vec::new(), Vec::new());
        };
        let lines: Vec<WrittenLine> = self
            .sequences_start(ambiguity.correction)
            .map(|start| {
                let sequences = ambiguity.sequences.iter();
                sequences
                    .map(|moves| write_line(written, start, moves))
                    .collect()
            })
            .unwrap_or_default();
        let mut reported: Vec<String> = lines.iter().map(|l| l.san.clone()).collect();
        if let Some(ply) = ambiguity.takeback {
            let retracted = self.record.moves()[ply..].iter();
            let retracted: Vec<String> = retracted.map(|m| m.san.to_string()).collect();
            reported.push(format!("takeback of {}", retracted.join(" ")));
        }
        (reported, lines)
    }

    /// Notes in the record the moves of `moves` (just recorded: the record's last moves)
    /// told from others by one reading of a piece taken at once, which the board never
    /// read standing: a queen promoted, and a pawn's push taken by a pawn where its one
    /// step and its two steps end alike (see `promotions_read`, `pawns_read`). The
    /// arbiter can tell, and correct them (see `correct_promotion`, `amend`).
    fn note_read_once(&mut self, moves: &[Move]) {
        let recorded = self.record.moves();
        let Some(first) = recorded.len().checked_sub(moves.len()) else {
            return;
        };
        if recorded[first..].iter().zip(moves).any(|(r, m)| r.mv != *m) {
            return;
        }
        let notes: Vec<(usize, String)> = moves
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let taken = moves
                    .get(i + 1)
                    .is_some_and(|next| taken_like_its_twin(*m, *next));
                let note = if m.is_promotion() {
                    format!("promoted piece {READ_ONCE_REMARK} (a misread is possible)")
                } else if taken {
                    format!(
                        "pawn {READ_ONCE_REMARK} (its one step taken and its two steps taken \
                         en passant leave the same position)"
                    )
                } else {
                    return None;
                };
                Some((first + i + 1, note))
            })
            .collect();
        for (ply, note) in notes {
            let _ = self.record.add_comment(ply, note);
        }
    }

    /// Whether the sequences of the ambiguity still open replace the last recorded move
    /// (their first move is played from the position before it).
    pub fn ambiguity_replaces_last(&self) -> bool {
        self.ambiguity.as_ref().is_some_and(|a| a.correction)
    }

    /// On an occupancy-only board a promotion is taken as a queen; when the promoted
    /// piece then jumps like a knight (the one move a queen cannot make), it was one.
    fn promotion_piece(&mut self) -> bool {
        let occupancy = self.config.occupancy_only;
        let Some(ply) = self.assumed_queen.filter(|_| occupancy) else {
            return false;
        };
        let Some(Move::Normal {
            role,
            from,
            capture,
            to,
            promotion: Some(Role::Queen),
        }) = self.record.moves().get(ply - 1).map(|m| m.mv)
        else {
            return false;
        };
        let knight = Move::Normal {
            role,
            from,
            capture,
            to,
            promotion: Some(Role::Knight),
        };
        let mut alt = self.record.clone();
        if alt.replace(ply, knight).is_err() {
            return false;
        }
        let pos = alt.position().clone();
        let expected = from_board(pos.board(), occupancy);
        let current = (&pos, alt.legal_moves());
        let mut replies = Candidates::default();
        replies.rebuild(
            &expected,
            current,
            closed(alt.status()),
            None,
            None,
            occupancy,
        );
        let changed = diff(&self.observed, &expected);
        let Match::One(i) = replies.find(&self.observed, changed, |c| self.landed(c)) else {
            return false;
        };
        let Some(mv) = replies
            .get(i)
            .map(|c| c.mv)
            .filter(|m| m.role() == Role::Knight)
        else {
            return false;
        };
        let old_san = self.record.moves()[ply - 1].san.to_string();
        self.record = alt;
        let new_san = self.record.moves()[ply - 1].san.to_string();
        self.events.push_back(Event::MoveCorrected {
            ply,
            old_san,
            new_san,
        });
        self.assumed_queen = None;
        self.rebuild();
        self.first_lift = FirstLift::Unclear;
        self.play(mv);
        true
    }

    /// Reports what to put where to restore the last legal position.
    pub(super) fn irregular(&mut self, kind: IrregularKind) {
        let pos = self.record.position();
        let restore = self
            .diff
            .into_iter()
            .map(|square| Fix {
                square,
                put: pos.board().piece_at(square),
            })
            .collect();
        let problems = if self.config.occupancy_only {
            Vec::new()
        } else {
            problems(&self.observed, pos.turn())
        };
        self.events.push_back(Event::Irregular { kind, restore });
        if !problems.is_empty() {
            self.events.push_back(Event::IllegalPosition { problems });
        }
        self.irregular_since = Some(self.last_change);
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::san::San;

    use super::*;

    /// Moves from `start` given in SAN.
    fn line(start: &Chess, sans: &str) -> Vec<Move> {
        let mut pos = start.clone();
        sans.split(' ')
            .map(|san| {
                let mv = san.parse::<San>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(mv);
                mv
            })
            .collect()
    }

    #[test]
    fn a_line_written_on_from_an_earlier_one_reads_as_written_whole() {
        let start = Chess::default();
        let played = "e4 e5 Nf3 Nc6 Bb5 a6 Bxc6 dxc6 O-O f6 d4 Bg4 dxe5 Qxd1 Rxd1";
        let whole = line(&start, played);
        let fresh = write_line(&[], &start, &whole);
        assert_eq!(fresh.san, played);
        // Written on from its first 9 moves, and from another start (not taken).
        let earlier = write_line(&[], &start, &whole[..9]);
        let elsewhere = WrittenLine {
            start: Chess::default().swap_turn().unwrap_or_default(),
            san: "not these moves".to_string(),
            ..earlier.clone()
        };
        let on = write_line(&[earlier, elsewhere], &start, &whole);
        assert_eq!(on.san, played);
        assert_eq!(on.end, fresh.end);
        // A line that turns off an earlier one is written whole.
        let other = line(&start, "e4 e5 Nf3 Nf6");
        let turned = write_line(std::slice::from_ref(&fresh), &start, &other);
        assert_eq!(turned.san, "e4 e5 Nf3 Nf6");
    }
}
