//! PGN export: Seven Tag Roster, SetUp/FEN for set-up positions, movetext with comments.

use std::fmt::Write as _;

use shakmaty::{Color, Position};

use super::record::GameRecord;

/// Longest movetext line; PGN export format asks for at most 79 characters.
const LINE_WIDTH: usize = 79;

/// Writes `record` as one PGN game, ending with a blank line.
pub fn write_pgn(record: &GameRecord) -> String {
    let result = record.status().result_str();
    let mut out = String::new();
    for (name, value) in record.tags() {
        write_tag(&mut out, name, value);
        if name == "Black" {
            write_tag(&mut out, "Result", result);
        }
    }
    if record.is_setup() {
        write_tag(&mut out, "SetUp", "1");
        write_tag(&mut out, "FEN", &record.start_fen());
    }
    out.push('\n');

    let mut tokens: Vec<String> = record.preface().iter().map(|c| comment(c)).collect();
    let start = record.start();
    let mut number = start.fullmoves().get();
    let mut turn = start.turn();
    let mut need_number = true;
    for m in record.moves() {
        if turn == Color::White {
            tokens.push(format!("{number}."));
        } else if need_number {
            tokens.push(format!("{number}..."));
        }
        tokens.push(m.san.to_string());
        let mut text: Vec<&str> = m.annotation.iter().map(String::as_str).collect();
        text.extend(m.comments.iter().map(String::as_str));
        // After a comment the next black move needs its number again.
        need_number = !text.is_empty();
        if need_number {
            tokens.push(comment(&text.join(" ")));
        }
        if turn == Color::Black {
            number += 1;
        }
        turn = !turn;
    }
    tokens.push(result.to_string());
    wrap(&mut out, &tokens);
    out.push_str("\n\n");
    out
}

/// The moves alone, numbered, without comments or result (e.g. to quote them in a
/// comment).
pub fn movetext(record: &GameRecord) -> String {
    let start = record.start();
    let mut number = start.fullmoves().get();
    let mut turn = start.turn();
    let mut parts = Vec::new();
    for (i, m) in record.moves().iter().enumerate() {
        if turn == Color::White {
            parts.push(format!("{number}."));
        } else if i == 0 {
            parts.push(format!("{number}..."));
        }
        parts.push(m.san.to_string());
        if turn == Color::Black {
            number += 1;
        }
        turn = !turn;
    }
    parts.join(" ")
}

fn write_tag(out: &mut String, name: &str, value: &str) {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = writeln!(out, "[{name} \"{escaped}\"]");
}

/// A brace comment; a closing brace inside would end it early, so it is replaced.
fn comment(text: &str) -> String {
    format!("{{{}}}", text.replace('}', ")").replace('{', "("))
}

fn wrap(out: &mut String, tokens: &[String]) {
    let mut line_len = 0;
    for token in tokens {
        if line_len > 0 && line_len + 1 + token.len() > LINE_WIDTH {
            out.push('\n');
            line_len = 0;
        }
        if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(token);
        line_len += token.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Termination;
    use shakmaty::KnownOutcome;

    #[test]
    fn seven_tag_roster_and_movetext() {
        let mut g = GameRecord::new();
        g.set_tag("White", "Anna \"A\"");
        for san in ["e4", "e5", "Nf3"] {
            g.push_san(san).unwrap();
        }
        g.add_comment(2, "touch-move: {g8} lifted first").unwrap();
        g.set_annotation(3, Some("[%clk 1:29:58]".into())).unwrap();
        let pgn = write_pgn(&g);
        let expected = "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
                        [White \"Anna \\\"A\\\"\"]\n[Black \"?\"]\n[Result \"*\"]\n\n\
                        1. e4 e5 {touch-move: (g8) lifted first} 2. Nf3 {[%clk 1:29:58]} *\n\n";
        assert_eq!(pgn, expected);
    }

    #[test]
    fn setup_position_with_black_to_move_and_result() {
        let mut g = GameRecord::from_fen("7k/8/5K2/8/8/8/8/6Q1 b - - 0 40").unwrap();
        g.push_san("Kh7").unwrap();
        g.push_san("Qg7#").unwrap();
        let pgn = write_pgn(&g);
        assert!(pgn.contains("[Result \"1-0\"]"), "{pgn}");
        assert!(pgn.contains("[SetUp \"1\"]\n[FEN \"7k/8/5K2/8/8/8/8/6Q1 b - - 0 40\"]"));
        assert!(pgn.ends_with("\n40... Kh7 41. Qg7# 1-0\n\n"), "{pgn}");
        assert_eq!(movetext(&g), "40... Kh7 41. Qg7#");
        let mut drawn = GameRecord::new();
        drawn.set_result(Some((KnownOutcome::Draw, Termination::Operator)));
        assert!(write_pgn(&drawn).ends_with("\n1/2-1/2\n\n"));
    }

    #[test]
    fn long_games_wrap_lines() {
        let mut g = GameRecord::new();
        for _ in 0..10 {
            for san in ["Nf3", "Nf6", "Ng1", "Ng8"] {
                if g.push_san(san).is_err() {
                    break;
                }
            }
        }
        let pgn = write_pgn(&g);
        assert!(pgn.lines().all(|l| l.len() <= LINE_WIDTH));
        assert!(pgn.lines().filter(|l| !l.starts_with('[')).count() > 2);
    }
}
