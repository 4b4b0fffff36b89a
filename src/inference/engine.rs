//! The engine: board snapshots in, moves and events out.
//!
//! Recognition policy. A board that is the complete result of exactly one legal move
//! becomes a *tentative* move, recorded when it has shown for the settle window; the
//! opponent starting a reply (touching only its own pieces) does not end the window, as
//! the updates of one scan arrive in any order (a slide's last step can come after the
//! opponent's lift). Waiting out the settle window keeps slides, pieces seen on two
//! squares and flicker out of the record (each intermediate board is replaced before the
//! window ends); boards that never rest long enough (fast play) are explained as a whole
//! by the search, which uses the order of the lifts; a move that did slip in
//! (e.g. rook placed, long pause, then the king for castling) is still replaced by a
//! *correction* while the opponent has not moved, so the mainline is always what the
//! board shows. Boards that match no single move are analysed once they are stable
//! (see `analysis`): new game, orientation, takeback, missed moves, pending, irregular.
//!
//! Per observation the work is a 64-byte remap and compare plus one mask compare per
//! candidate move; move generation happens once per recorded move.

use std::collections::VecDeque;
use std::time::Duration;

use boardcast_protocol::RawBoard;
use shakmaty::{Bitboard, CastlingMode, Chess, Color, Move, Position, Role, Square, uci::UciMove};

use super::analysis::Unexplained;
use super::candidates::{Candidate, Candidates, Match, Origin};
use super::codes::{
    Codes, EMPTY, code_piece, diff, from_board, from_hardware, move_squares, piece_code,
};
use super::config::EngineConfig;
use super::event::Event;
use super::history::{Change, History};
use super::search::{
    CheckedLines, Explanation, Since, explain, landing, moved_elsewhere, put_down,
};
use super::unconfirmed::Unconfirmed;
use crate::game::{GameRecord, Status, Termination};

/// A move recognised on the board but not recorded yet.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tentative {
    pub index: usize,
    pub since: Duration,
}

/// The first piece of the side to move lifted since its position arose (Art. 7 evidence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FirstLift {
    NotYet,
    At(Square, Duration),
    /// Several pieces changed in one reading: the order is unknown.
    Unclear,
}

impl FirstLift {
    /// From the pieces of the side to move seen lifted together, with when: one is the
    /// first lift, several leave the order unclear.
    fn of(mut lifted: impl Iterator<Item = (Square, Duration)>) -> FirstLift {
        match (lifted.next(), lifted.next()) {
            (Some((sq, at)), None) => FirstLift::At(sq, at),
            (Some(_), Some(_)) => FirstLift::Unclear,
            _ => FirstLift::NotYet,
        }
    }
}

/// Sequences of moves that explain the board equally well.
#[derive(Clone, Debug)]
pub(super) struct Ambiguity {
    pub sequences: Vec<Vec<Move>>,
    /// The sequences start from the position before the last recorded move, their first
    /// move replacing it.
    pub correction: bool,
    /// The sequences are every explanation the search found (not cut at its cap) of a
    /// board read whole after updates were lost, or of an occupancy-only board, so the
    /// moves made start with one of them. (A board that reads piece codes, seen piece
    /// by piece, can rest part-way through fast handling, which no sequence describes:
    /// its ambiguities bind nothing.)
    pub binding: bool,
    /// The board also shows the position after this many plies of the game, read after
    /// lost updates: taking the moves after it back is one more explanation (reported
    /// after the sequences). The position is the same either way, so the moves made
    /// next tell nothing: nothing is recorded until the arbiter picks.
    pub takeback: Option<usize>,
    /// Moves recorded from a board read after lost updates were withdrawn (see
    /// `unconfirmed`): how many moves were made is not known, so nothing is recorded
    /// until the arbiter picks one of the sequences or enters the moves.
    pub hold: bool,
    /// Each sequence explains the board read after lost updates only with a move in
    /// progress never read under way (see `search::choose`): the pieces it has in the
    /// hand may as well have been taken while nothing was read. Nothing is recorded
    /// from the board itself; a board read since that only moves after one of them
    /// explain (its pieces read landing) settles it (see `Engine::carried`).
    pub unread_tail: bool,
}

/// A sequence of an ambiguity as reported in SAN, with the positions it starts from and
/// leads to.
#[derive(Clone, Debug)]
pub(super) struct WrittenLine {
    pub start: Chess,
    pub moves: Vec<Move>,
    pub san: String,
    pub end: Chess,
}

impl Ambiguity {
    /// Whether recording `moves`, the start of an explanation of `plies` moves (the first
    /// replacing the last move when `correction`), would contradict the ambiguity: the
    /// moves made since start with one of its sequences, so an explanation found later
    /// must agree with one of them and be at least as long (a shorter one leaves moves
    /// the board was read with unmade: a piece read on its square after a move, seen
    /// in the hand again, was not taken back).
    pub fn contradicts(&self, moves: &[Move], plies: usize, correction: bool) -> bool {
        self.takeback.is_some()
            || self.hold
            || self.binding
                && (self.correction != correction
                    || !self
                        .sequences
                        .iter()
                        .any(|s| plies >= s.len() && s.iter().zip(moves).all(|(a, b)| a == b)))
    }
}

/// Turns the stream of board snapshots of one board into moves and events.
#[derive(Clone, Debug)]
pub struct Engine {
    pub(super) config: EngineConfig,
    pub(super) record: GameRecord,
    pub(super) rotated: bool,
    pub(super) raw: [u8; 64],
    pub(super) observed: Codes,
    pub(super) expected: Codes,
    pub(super) diff: Bitboard,
    /// When each square began to differ from the expected board (order evidence).
    pub(super) since: Since,
    /// When each square last changed, and since when changes belong to moves not yet
    /// recorded (the board first showed the last recorded move).
    pub(super) changed_at: Since,
    /// The changes themselves, in order (see `history`).
    pub(super) history: History,
    pub(super) anchor: Duration,
    /// The `anchor` before it: when the board first showed the position the last move
    /// was played from (a correction's move was begun after it).
    pub(super) previous_anchor: Duration,
    /// The last change read before moves found by the search were last recorded: what
    /// the board read after it is of moves made since (see `round_trip`).
    pub(super) searched_through: Duration,
    pub(super) candidates: Candidates,
    pub(super) tentative: Option<Tentative>,
    pub(super) last_change: Duration,
    pub(super) analysed: bool,
    /// The side to move is decided by the first move (set-up and re-anchored positions).
    pub(super) turn_open: bool,
    pub(super) first_lift: FirstLift,
    /// The first lift before the last recorded move, for judging its corrections.
    pub(super) move_lift: FirstLift,
    /// Ply of a promotion assumed to be a queen on an occupancy-only board.
    pub(super) assumed_queen: Option<usize>,
    pub(super) irregular_since: Option<Duration>,
    /// The last board the search could not explain (see `analysis`).
    pub(super) unexplained: Option<Unexplained>,
    /// The last ambiguity reported, while the record is unchanged, for the arbiter to
    /// pick from (`resolve`).
    pub(super) ambiguity: Option<Ambiguity>,
    /// The open ambiguity's sequences as last reported in SAN (see `write_line`).
    pub(super) written: Vec<WrittenLine>,
    /// The hypotheses last carried, checked legal (see `carried`).
    pub(super) checked: CheckedLines,
    /// Updates were lost since the record last changed (see `updates_lost`).
    pub(super) lost_updates: bool,
    /// When updates were last lost: the readings before it are not all known.
    pub(super) lost_at: Option<Duration>,
    /// The moves recorded when updates were last lost: the positions they pass through
    /// were shown before `lost_at`, not since (see `replay`).
    pub(super) lost_moves: Vec<Move>,
    /// When updates were lost, the last move had been recorded with no reading after the
    /// board showed it: its settle window may have run while the link was down (a slide
    /// cut off on its way), so the board read then may show it made on (see `explained`).
    pub(super) rest_unread: bool,
    /// When updates were lost with the last move's rest unread, its piece had been read
    /// landing within a scan of leaving its square, never in the hand: it may have been
    /// sliding on (see `explained`). A piece set down after a while in the hand was
    /// placed there.
    pub(super) in_stride: bool,
    /// When updates were lost, a piece of the side to move had been read lifted since
    /// the last move was read whole: the reply was begun (see `explained`).
    pub(super) replied_when_lost: bool,
    /// Moves recorded from the board read after lost updates, until a move read since
    /// confirms the side to move (see `unconfirmed`).
    pub(super) unconfirmed: Option<Unconfirmed>,
    /// The hold window of the board read last has been judged (see `held`).
    pub(super) hold_judged: bool,
    /// The search lets a move's piece be read leaving up to a scan before the previous
    /// move's (see `explained_in_any_order`).
    pub(super) lift_slack: bool,
    /// Since when the board read last has been read unchanged, the link up (see `held`).
    pub(super) held_since: Duration,
    /// The link went down and nothing was read since (see `link_down`).
    pub(super) link_down: bool,
    pub(super) last_status: Status,
    pub(super) events: VecDeque<Event>,
    /// Games a new game replaced, one per `NewGame` event, oldest first, until taken.
    pub(super) replaced: VecDeque<GameRecord>,
}

impl Engine {
    /// An engine expecting the standard start position.
    pub fn new(config: EngineConfig) -> Self {
        Self::with_record(config, GameRecord::new())
    }

    /// An engine continuing `record` (e.g. a game started from a set-up FEN).
    pub fn with_record(config: EngineConfig, record: GameRecord) -> Self {
        let mut engine = Engine {
            config,
            last_status: record.status(),
            record,
            rotated: false,
            raw: [0; 64],
            observed: [0; 64],
            expected: [0; 64],
            diff: Bitboard::EMPTY,
            since: [None; 64],
            changed_at: [None; 64],
            history: History::default(),
            anchor: Duration::ZERO,
            previous_anchor: Duration::ZERO,
            searched_through: Duration::ZERO,
            candidates: Candidates::default(),
            tentative: None,
            last_change: Duration::ZERO,
            analysed: true,
            turn_open: false,
            first_lift: FirstLift::NotYet,
            move_lift: FirstLift::NotYet,
            assumed_queen: None,
            irregular_since: None,
            unexplained: None,
            ambiguity: None,
            written: Vec::new(),
            checked: CheckedLines::default(),
            lost_updates: false,
            lost_at: None,
            lost_moves: Vec::new(),
            unconfirmed: None,
            rest_unread: false,
            in_stride: false,
            replied_when_lost: false,
            hold_judged: false,
            lift_slack: false,
            held_since: Duration::ZERO,
            link_down: false,
            events: VecDeque::new(),
            replaced: VecDeque::new(),
        };
        engine.rebuild();
        // Until the board reports, assume it shows the game's position.
        engine.observed = engine.expected;
        engine.diff = Bitboard::EMPTY;
        engine.since = [None; 64];
        engine
    }

    /// The settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The game so far.
    pub fn game(&self) -> &GameRecord {
        &self.record
    }

    /// The game the oldest `NewGame` event not yet matched replaced, as it stood then
    /// (its last move included even when that move and the new game came in one step).
    pub fn take_replaced_game(&mut self) -> Option<GameRecord> {
        self.replaced.pop_front()
    }

    /// Whether the board is being read as turned 180°.
    pub fn is_rotated(&self) -> bool {
        self.rotated
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// From when hearing the link proves that the last recorded move's rest was read (a
    /// settle window after the board showed it), while the board has not changed since
    /// it did; see `updates_lost`. The board first showed the move at its anchor, or, for
    /// a move the search recorded (the anchor stays), when its piece landed.
    pub fn rest_read_at(&self) -> Option<Duration> {
        if self.record.ply_count() == 0 {
            return None;
        }
        let shown = self
            .last_landed()
            .map_or(self.anchor, |t| t.max(self.anchor));
        (self.last_change <= shown).then_some(shown + self.config.settle)
    }

    /// When `tick` next has something to do.
    pub fn next_deadline(&self) -> Option<Duration> {
        let settle = match self.tentative {
            Some(t) => Some(t.since + self.config.settle),
            None if !self.analysed => Some(self.last_change + self.config.settle),
            None => None,
        };
        let reanchor = self
            .irregular_since
            .zip(self.config.auto_reanchor)
            .map(|(since, delay)| since + delay);
        [settle, reanchor, self.hold_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs the timers due at `now`: records a settled move, analyses a stable board,
    /// re-anchors automatically.
    pub fn tick(&mut self, now: Duration) {
        loop {
            // A recorded move can leave the board showing the next one complete.
            while let Some(t) = self.tentative
                && now >= t.since + self.config.settle
            {
                self.previous_anchor = self.anchor;
                self.anchor = t.since;
                self.commit(t.index);
            }
            if self.tentative.is_none()
                && !self.analysed
                && now >= self.last_change + self.config.settle
            {
                self.analysed = true;
                if self.diff.any() {
                    self.analyse();
                } else {
                    self.round_trip();
                }
                // What the analysis recorded can leave the board showing the next move
                // complete, resting since the last change: that move is due now too.
                continue;
            }
            break;
        }
        self.judge_hold(now);
        if let (Some(since), Some(delay)) = (self.irregular_since, self.config.auto_reanchor)
            && now >= since + delay
        {
            self.irregular_since = None;
            // A board that cannot be accepted simply stays irregular.
            let _ = self.accept_board();
        }
    }

    /// The board is read afresh after updates were lost (a dump after the link or the
    /// daemon was down): any square may have changed and changed back meanwhile, so no
    /// square counts as seen unchanged (see `seen`). `heard` is when the link was last
    /// heard before it went down, if known (a frame then proves every update sent before
    /// it arrived): the board stood as read until then.
    pub fn updates_lost(&mut self, now: Duration, heard: Option<Duration>) {
        // A move that rested its settle window before is recorded first: recording it
        // must not clear what is said here of the board read now.
        self.tick(now);
        // Nothing read since the board showed the last move means its rest went unread,
        // unless it was heard for a settle window before the link went down: the move
        // would have been recorded live then.
        self.rest_unread = self
            .rest_read_at()
            .is_some_and(|read_at| heard.is_none_or(|h| h < read_at));
        self.in_stride = self.rest_unread && self.landed_in_stride();
        // A move recorded from a search leaves the first lift unclear: only a move read
        // whole, then a lift of the other side's piece, counts.
        self.replied_when_lost = matches!(self.first_lift, FirstLift::At(..));
        self.changed_at = [Some(now); 64];
        self.lost_updates = true;
        self.lost_at = Some(now);
        self.lost_moves = self.record.moves().iter().map(|m| m.mv).collect();
        if let Some(unconfirmed) = &mut self.unconfirmed {
            unconfirmed.at = now;
        }
    }

    /// The link went down: nothing is read until the board is read again, so no piece
    /// counts as held meanwhile (see `held`).
    pub fn link_down(&mut self) {
        self.link_down = true;
    }

    /// The live board (the mirror, raw codes by hardware index) after a change at `now`.
    pub fn observe(&mut self, board: &RawBoard, now: Duration) {
        self.tick(now);
        if self.link_down {
            self.link_down = false;
            self.held_since = now;
        }
        self.raw = board.0;
        let board = from_hardware(&self.raw, self.rotated, self.config.occupancy_only);
        self.observe_codes(board, now);
    }

    /// The observed board, remapped into codes, after a change at `now` (timers run).
    pub(super) fn observe_codes(&mut self, board: Codes, now: Duration) {
        if board == self.observed {
            return;
        }
        self.track_lifts(&board, now);
        for sq in diff(&board, &self.observed) {
            let i = sq.to_usize();
            self.changed_at[i] = Some(now);
            self.history.push(Change {
                at: now,
                square: sq,
                occupied: board[i] != EMPTY,
                code: board[i],
                was: self.observed[i],
            });
            if board[i] == self.expected[i] {
                self.since[i] = None;
            } else if self.since[i].is_none() {
                self.since[i] = Some(now);
            }
        }
        let kept = self.tentative.filter(|t| {
            self.opponent_started(t.index, &board) && !self.reply_may_have_landed(t, &board, now)
        });
        self.observed = board;
        self.last_change = now;
        self.analysed = false;
        self.hold_judged = false;
        self.held_since = now;
        self.irregular_since = None;
        self.refresh(now);
        if self.tentative.is_none() {
            self.tentative = kept;
        }
    }

    /// Squares that changed since the board first showed the last recorded move, or
    /// differ from it now.
    pub(super) fn seen(&self) -> Bitboard {
        self.seen_since(self.anchor)
    }

    /// Squares that changed since `from`, or differ from the recorded position now.
    pub(super) fn seen_since(&self, from: Duration) -> Bitboard {
        let changed: Bitboard = Square::ALL
            .into_iter()
            .filter(|sq| self.changed_at[sq.to_usize()].is_some_and(|t| t >= from))
            .collect();
        changed | self.diff
    }

    /// Compares the observed board with the expected one and the candidate moves.
    pub(super) fn refresh(&mut self, now: Duration) {
        self.diff = diff(&self.observed, &self.expected);
        self.tentative = match self.find_move(&self.candidates) {
            Match::One(index) if self.diff.any() && !self.contradicts_ambiguity(index) => {
                Some(Tentative { index, since: now })
            }
            _ => None,
        };
    }

    /// Whether recording candidate `index` would contradict the open ambiguity.
    pub(super) fn contradicts_ambiguity(&self, index: usize) -> bool {
        let (Some(ambiguity), Some(c)) = (&self.ambiguity, self.candidates.get(index)) else {
            return false;
        };
        ambiguity.contradicts(&[c.mv], 1, c.origin == Origin::Correction)
    }

    /// The candidate move the observed board shows. On an occupancy-only board a capture
    /// leaves the same board as its piece still in the hand, or as another capture by
    /// the same piece: it is only the move made when its target square was seen to be
    /// occupied again after the piece was lifted (the capturing piece landing).
    /// A correction is not taken once the reply was read (see `replied`), nor of a move
    /// still unconfirmed (see `corrects_unconfirmed`). After lost updates, a move the
    /// board read then was no snapshot of is left to the search (see
    /// `contradicts_fresh_read`), as is one that leaves out what was read since better
    /// explained by the other side to move (see `contradicts_unconfirmed`).
    pub(super) fn find_move(&self, candidates: &Candidates) -> Match {
        candidates.find(&self.observed, self.diff, |c| {
            self.landed(c)
                && !self.contradicts_fresh_read(c)
                && (c.origin != Origin::Current || !self.contradicts_unconfirmed(c.mv))
                && (c.origin != Origin::Correction
                    || !self.replied() && !self.answered() && !self.corrects_unconfirmed())
        })
    }

    /// On an occupancy-only board, whether the board is also the recorded position with
    /// moves made since: part-way to a move of the side to move, or moves the search
    /// finds from it. A correction replaces a move already published, so it is only
    /// taken when nothing after that move explains the board (as `explained` looks for
    /// one only then).
    fn answered(&self) -> bool {
        if !self.config.occupancy_only {
            return false;
        }
        let partial = self
            .candidates
            .partial(&self.observed, self.diff, true)
            .into_iter()
            .any(|i| {
                self.candidates
                    .move_at(i)
                    .is_some_and(|(_, origin)| origin != Origin::Correction)
            });
        partial || self.searched_on_occupancy() != Explanation::Nothing
    }

    /// On an occupancy-only board, what the search from the recorded position finds, to
    /// the depth `explained` searches there.
    pub(super) fn searched_on_occupancy(&self) -> Explanation {
        explain(
            self.record.position(),
            &self.observed,
            self.evidence(),
            true,
            self.config.max_search_plies + 2,
            None,
        )
    }

    /// From when the pieces read standing tell of the moves after the recorded position:
    /// the start of the evidence, or later, when the last recorded move's piece was last
    /// placed (a move the search recorded leaves the anchor where it was, and the readings
    /// before that landing are the previous moves', e.g. a piece touched and put back).
    /// On a board that reads pieces, one read back within a scan of being read gone was
    /// not placed again: the readings since it landed still tell of the moves after it
    /// (see `History::last_put_down`). On an occupancy-only board that may be a capture
    /// (the piece taken, the one taking it put down).
    pub(super) fn readings_from(&self) -> Duration {
        let start = self.anchor.saturating_sub(self.config.settle);
        let landed = if self.config.occupancy_only {
            self.last_landed()
        } else {
            self.last_landed_by(|sq| self.history.last_put_down(sq, self.config.settle))
        };
        landed.map_or(start, |t| t.max(start))
    }

    /// Whether the last recorded move's piece was last read on its square no later than
    /// a scan after its own square was last read left (a slide keeps the piece on the
    /// board: Qc2 read with d1 emptied in the same scan, not Rfe1 set down 880 ms after
    /// the rook left f1).
    fn landed_in_stride(&self) -> bool {
        let Some(Move::Normal { from, to, .. }) = self.record.moves().last().map(|m| m.mv) else {
            return false;
        };
        match (self.history.last_left(from), self.history.last_filled(to)) {
            (Some(left), Some(landed)) => landed <= left + self.config.settle,
            _ => false,
        }
    }

    /// When the last recorded move's piece was last read placed where it went.
    fn last_landed(&self) -> Option<Duration> {
        self.last_landed_by(|sq| self.history.last_filled(sq))
    }

    /// The latest of `placed` (when a square was read filled) over the squares the last
    /// recorded move puts its pieces on.
    fn last_landed_by(&self, placed: impl Fn(Square) -> Option<Duration>) -> Option<Duration> {
        let last = self.record.moves().last()?;
        let mover = !self.record.position().turn();
        landing(last.mv, mover).into_iter().filter_map(placed).max()
    }

    /// Whether the board read a piece of the side to move standing (longer than a wrong
    /// code lasts) where the recorded position has none of it, and replaced since, after
    /// the last move was shown: the reply was made (and maybe taken on or back), so the
    /// last move is no longer being corrected (a correction replaces a move before the
    /// opponent answers it); or read one anywhere its side had none (see `reply_read`).
    /// Occupancy-only boards cannot tell whose piece it was.
    pub(super) fn replied(&self) -> bool {
        if self.config.occupancy_only {
            return false;
        }
        let pos = self.record.position();
        let from = self.readings_from();
        let stood = self.history.stood_replaced(from, self.config.settle);
        stood.into_iter().any(|(sq, code)| {
            code_piece(code)
                .is_some_and(|p| p.color == pos.turn() && pos.board().piece_at(sq) != Some(p))
        }) || self.reply_read(from)
    }

    /// Whether the board read a piece of the side to move, since `from` and for however
    /// short a time, on a square where that side has a piece neither in the recorded
    /// position nor before the last move. No correction of the last move puts one there
    /// (the mover's own pieces move; the opponent's only go back where a capture took
    /// them), and a wrong code keeps its piece's colour: it is the reply under way, even
    /// one whose piece was taken within a scan (h1=N read once, then Bxh1 leaving the
    /// bishop where it stood before Bf3, also Bf3 replaced by Kxh2 in progress).
    fn reply_read(&self, from: Duration) -> bool {
        let pos = self.record.position();
        let turn = pos.turn();
        let mut held = pos.board().by_color(turn);
        let before = self.record.ply_count().checked_sub(1);
        if let Some(before) = before.and_then(|ply| self.record.position_at(ply)) {
            held |= before.board().by_color(turn);
        }
        let ours = Role::ALL
            .into_iter()
            .fold(0u16, |bits, role| bits | 1 << piece_code(role.of(turn)));
        let read = self.history.codes_read(from);
        (!held)
            .into_iter()
            .any(|sq| read[sq.to_usize()] & ours != 0)
    }

    /// Whether the board history shows `c`'s piece landing on a captured piece's square:
    /// the square changed (last, to occupied) after the piece's square was left, after
    /// the last recorded move was shown and after the square was seen emptied. A change
    /// read in the same scan as the lift is not that piece landing (e.g. the last move's
    /// pawn landing on the square while the would-be capturer's square flickers empty).
    /// Nor is a filling read later than `put_down` allows after the piece left and the
    /// square emptied (a piece of the side to reply held there, see `PUT_DOWN`).
    /// Quiet moves, and any move on a board that reads piece codes, need no such evidence.
    pub(super) fn landed(&self, c: &Candidate) -> bool {
        if !self.config.occupancy_only {
            return true;
        }
        if c.origin == Origin::Correction && !self.moved_on(c) {
            return false;
        }
        let (Some(from), true) = (c.mv.from(), c.mv.is_capture()) else {
            return true;
        };
        let to = c.mv.to().to_usize();
        let from = from.to_usize();
        let lifted = self.since[from].or(self.changed_at[from]);
        // The captured piece was seen taken off first: a square that only filled (the
        // piece captured arriving there in a move recorded with this one's board, found
        // by the search) shows no capture landing.
        let emptied = self
            .history
            .left(c.mv.to(), self.anchor.saturating_sub(self.config.settle));
        match (self.changed_at[to], lifted, emptied) {
            (Some(landed), Some(lifted), Some(emptied)) => {
                landed > lifted
                    && landed > self.anchor
                    && landed > emptied
                    && (self.lost_updates || put_down(lifted, emptied, landed, self.config.settle))
                    && !self.lifted_before_last_landed(lifted, c.mv.to())
            }
            _ => false,
        }
    }

    /// Whether a reply lifted at `lifted` (not capturing on `to`, a square the last
    /// recorded move landed on) was lifted while that square still read empty, more than
    /// a scan before it was read filling: a player replies to a finished move, so that
    /// filling is the last move landing after all and this capture's square, read
    /// emptied and filled beside it, a flicker (the search weighs the readings instead).
    /// A square read occupied as the piece was lifted and emptied only after shows the
    /// last move landed before the reply: its filling again is that piece flickering or
    /// adjusted (Qc1, then Qxa3 swapped with c1 read emptied and filled as the queen
    /// lands), no late landing.
    fn lifted_before_last_landed(&self, lifted: Duration, to: Square) -> bool {
        let Some(last) = self.record.moves().last() else {
            return false;
        };
        let squares = landing(last.mv, !self.record.position().turn());
        let settled = lifted + self.config.settle;
        !squares.contains(to)
            && squares.into_iter().any(|sq| {
                [lifted, settled]
                    .into_iter()
                    .all(|t| self.history.occupied_at(sq, t) == Some(false))
                    && self.history.last_filled(sq).is_some_and(|t| t > settled)
            })
    }

    /// On an occupancy-only board, whether correction `c` of the last move, a quiet move
    /// of the same piece elsewhere, shows that piece landing on its square no earlier
    /// than it left the last move's square (within a scan: readings of one moment may
    /// come a scan apart). The piece stood there, so a fill of `c`'s square before it
    /// left (a flicker, or the reply's piece) is no landing of it, and the square
    /// emptied later is the reply begun (the piece captured, lifted first).
    fn moved_on(&self, c: &Candidate) -> bool {
        let last = self.record.moves().last().map(|m| m.mv);
        let Some((to, square)) = last.and_then(|last| moved_elsewhere(last, c.mv)) else {
            return true;
        };
        let Some(vacated) = self.history.last_left(to) else {
            return true;
        };
        self.changed_at[square.to_usize()]
            .is_some_and(|landed| landed + self.config.settle >= vacated)
    }

    /// Whether `board` still shows the tentative move on its squares while the other side
    /// has started its reply: the move then stays tentative (and is recorded when its
    /// window ends) instead of being lost among the reply's half-finished boards.
    fn opponent_started(&self, index: usize, board: &Codes) -> bool {
        let Some(c) = self.candidates.get(index) else {
            return false;
        };
        if c.changed
            .into_iter()
            .any(|sq| board[sq.to_usize()] != c.value(sq))
        {
            return false;
        }
        let pieces = self.record.position().board();
        (diff(board, &self.expected) & !c.changed)
            .into_iter()
            .any(|sq| pieces.color_at(sq) == Some(!c.mover))
    }

    fn track_lifts(&mut self, board: &Codes, now: Duration) {
        if self.turn_open {
            return;
        }
        let turn = self.record.position().turn();
        let pieces = self.record.position().board();
        match self.first_lift {
            FirstLift::At(sq, at) => {
                // Put back within a scan or two: sensor noise, not a touch.
                let i = sq.to_usize();
                if board[i] == self.expected[i] && now.saturating_sub(at) < self.config.settle {
                    self.first_lift = FirstLift::NotYet;
                }
            }
            FirstLift::Unclear => {}
            FirstLift::NotYet => {
                let lifted = diff(board, &self.observed).into_iter().filter(|sq| {
                    pieces.color_at(*sq) == Some(turn)
                        && board[sq.to_usize()] != self.expected[sq.to_usize()]
                });
                self.first_lift = FirstLift::of(lifted.map(|sq| (sq, now)));
            }
        }
    }

    /// Records candidate `index`.
    pub(super) fn commit(&mut self, index: usize) {
        self.tentative = None;
        let Some(c) = self.candidates.get(index).cloned() else {
            return;
        };
        match c.origin {
            Origin::Current => self.play(c.mv),
            Origin::OtherTurn => {
                if let Some(pos) = self.candidates.other_turn().cloned() {
                    let tags = self.record.tags().to_vec();
                    let preface = self.record.preface().to_vec();
                    self.record = GameRecord::from_position(pos);
                    for (name, value) in tags {
                        self.record.set_tag(&name, &value);
                    }
                    for text in preface {
                        let _ = self.record.add_comment(0, text);
                    }
                }
                self.play(c.mv);
            }
            Origin::Correction => self.correct_last(c.mv),
        }
    }

    /// Records `mv` (legal in the current position) and reports it.
    pub(super) fn play(&mut self, mv: Move) {
        self.note_recorded(self.record.ply_count());
        let before = self.record.position().clone();
        let Ok(recorded) = self.record.push(mv) else {
            return;
        };
        // Written straight into strings sized for any move (no formatter).
        let mut san = String::with_capacity(8);
        recorded.san.append_to_string(&mut san);
        let mut uci = String::with_capacity(5);
        UciMove::from_move(mv, CastlingMode::Standard).append_to_string(&mut uci);
        let ply = self.record.ply_count();
        self.events.push_back(Event::MoveMade { ply, san, uci });
        if !self.turn_open {
            self.check_touch(&before, mv, self.first_lift, ply);
        }
        if self.config.occupancy_only && mv.promotion() == Some(Role::Queen) {
            self.assumed_queen = Some(ply);
        }
        self.move_lift = self.first_lift;
        self.turn_open = false;
        self.rebuild();
        self.first_lift = self.reply_first_lift(mv, before.turn());
    }

    /// The first lift of the side to move as `mv` (by `mover`) is recorded: a piece of
    /// theirs already off its square, read leaving it after the last of the move's
    /// squares changed (a fast reply, begun within the move's settle window, when
    /// `track_lifts` still counted the mover's pieces). One such piece is the reply's
    /// first lift (a rook lifted then, before the king, makes castling a touch-move
    /// irregularity); several leave the order unclear. A piece read leaving in the
    /// reading that completed the move may have gone first, so it does not count.
    fn reply_first_lift(&self, mv: Move, mover: Color) -> FirstLift {
        let pos = self.record.position();
        // Most moves are recorded with the board showing them (`diff`, set by `rebuild`).
        let off = self.diff & pos.board().by_color(pos.turn());
        if off.is_empty() {
            return FirstLift::NotYet;
        }
        let changed = |sq: Square| self.changed_at[sq.to_usize()];
        let Some(landed) = move_squares(mv, mover)
            .into_iter()
            .filter_map(changed)
            .max()
        else {
            return FirstLift::NotYet;
        };
        FirstLift::of(
            (off.into_iter())
                .filter_map(|sq| changed(sq).filter(|&at| at > landed).map(|at| (sq, at))),
        )
    }

    /// Records `moves` one after the other, the first replacing the last move when
    /// `correction`: a sequence the search found or the arbiter picked, so no lift seen
    /// is known to start any of them.
    pub(super) fn record_sequence(&mut self, moves: &[Move], correction: bool) {
        // Each move of a sequence explaining a board read after lost updates is such a
        // move (recording one clears the flag).
        let lost_updates = self.lost_updates;
        for (i, &mv) in moves.iter().enumerate() {
            self.lost_updates = lost_updates;
            self.first_lift = FirstLift::Unclear;
            // A correction's sequence may keep the last move (the record's line offered
            // beside its replacements: see `explained`).
            let kept = self.record.moves().last().is_some_and(|m| m.mv == mv);
            match (correction && i == 0, kept) {
                (true, true) => {}
                (true, false) => self.correct_last(mv),
                (false, _) => self.play(mv),
            }
        }
        self.first_lift = FirstLift::Unclear;
        self.searched_through = self.last_change;
    }

    /// Replaces the last move by `mv` (legal in the position before it).
    pub(super) fn correct_last(&mut self, mv: Move) {
        let ply = self.record.ply_count();
        let Some(old) = self.record.moves().last().map(|m| m.san.to_string()) else {
            return;
        };
        self.note_recorded(ply - 1);
        if self.record.replace(ply, mv).is_err() {
            return;
        }
        let new_san = self.record.moves()[ply - 1].san.to_string();
        self.events.push_back(Event::MoveCorrected {
            ply,
            old_san: old,
            new_san,
        });
        if let Some(before) = self.record.position_at(ply - 1).cloned() {
            self.check_touch(&before, mv, self.move_lift, ply);
        }
        if self.assumed_queen == Some(ply) && mv.promotion() != Some(Role::Queen) {
            self.assumed_queen = None;
        }
        self.first_lift = FirstLift::NotYet;
        self.rebuild();
    }

    /// Reports a touch-move irregularity: the first piece lifted could have moved but a
    /// different one did (Art. 7.2); for castling, the rook was lifted first (5.1(3)).
    fn check_touch(&mut self, before: &Chess, mv: Move, lift: FirstLift, ply: usize) {
        let FirstLift::At(sq, _) = lift else {
            return;
        };
        if mv.from() == Some(sq) || !before.legal_moves().iter().any(|m| m.from() == Some(sq)) {
            return;
        }
        let piece = before.board().piece_at(sq).map_or('?', |p| p.char());
        let detail = match mv {
            Move::Castle { rook, .. } if rook == sq => {
                "castled after touching the rook first (Art. 5.1(3))".to_string()
            }
            _ => format!("{piece}{sq} was touched first but another piece moved (Art. 7.2)"),
        };
        let _ = self
            .record
            .add_comment(ply, format!("touch-move: {detail}"));
        self.events.push_back(Event::TouchMove {
            ply,
            touched: sq,
            detail,
        });
    }

    /// Recomputes everything derived from the record, and reports a changed status.
    pub(super) fn rebuild(&mut self) {
        let occupancy = self.config.occupancy_only;
        let pos = self.record.position();
        let was_expected =
            std::mem::replace(&mut self.expected, from_board(pos.board(), occupancy));
        let status = self.record.status();
        let other_turn = (self.turn_open && self.record.ply_count() == 0)
            .then(|| pos.clone().swap_turn().ok())
            .flatten();
        let before = self.record.ply_count().checked_sub(1);
        let before_moves = before.and_then(|i| self.record.legal_moves_at(i));
        // The position before the last move is borrowed: the list clones it once, where
        // it keeps it.
        let previous = before.zip(before_moves.as_deref()).and_then(|(i, moves)| {
            let prev = self.record.position_at(i)?;
            Some((prev, self.record.moves()[i].mv, moves))
        });
        self.candidates.rebuild(
            &self.expected,
            (pos, self.record.legal_moves()),
            closed(status),
            other_turn,
            previous,
            occupancy,
        );
        self.diff = diff(&self.observed, &self.expected);
        // Only the few squares that differ keep (or start) a time: a fresh array and a
        // walk over them, not a test of all 64 squares after every move. A square the
        // record changed has differed since its readings left what the record now has
        // there (the destination of a move just recorded, left again by the next one
        // before this one's window ended, was left then, not now).
        let mut since: Since = [None; 64];
        for sq in self.diff {
            let i = sq.to_usize();
            let left_at = (was_expected[i] != self.expected[i])
                .then(|| self.history.differs_since(sq, self.expected[i]))
                .flatten();
            since[i] = left_at.or(self.since[i]).or(Some(self.last_change));
        }
        self.since = since;
        // The board may already show the next move complete (it was made while this one
        // waited out its window). A board showing the recorded position shows none: the
        // list is not walked for it (the usual case after a move).
        let shown = self.diff.any().then(|| self.find_move(&self.candidates));
        self.tentative = match shown {
            Some(Match::One(index)) => Some(Tentative {
                index,
                since: self.last_change,
            }),
            _ => None,
        };
        self.irregular_since = None;
        // An ambiguity is about the position it was reported from.
        self.ambiguity = None;
        self.written.clear();
        self.checked = CheckedLines::default();
        self.lost_updates = false;
        self.rest_unread = false;
        self.in_stride = false;
        self.report_status(status);
    }

    fn report_status(&mut self, status: Status) {
        if status == self.last_status {
            return;
        }
        match status {
            Status::Ended {
                outcome,
                termination,
            } => self.events.push_back(Event::GameEnded {
                outcome,
                termination,
            }),
            Status::InPlay(claims) if claims.any() => {
                self.events.push_back(Event::DrawClaimable(claims))
            }
            Status::InPlay(_) => {}
        }
        self.last_status = status;
    }
}

/// Whether a game with this status records nothing more: it ended by checkmate or
/// stalemate (no move is legal), a result signal or the operator. After a dead position,
/// a fivefold repetition or the 75-move rule players may play on unaware; a bridge
/// records what is played, and the result stands.
pub(super) fn closed(status: Status) -> bool {
    matches!(
        status,
        Status::Ended { termination, .. }
            if !matches!(
                termination,
                Termination::DeadPosition
                    | Termination::FivefoldRepetition
                    | Termination::SeventyFiveMoves
            )
    )
}
