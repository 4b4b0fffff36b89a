//! Property tests: encode-then-decode identity in both directions, robustness against
//! arbitrary bytes, and resynchronisation after garbage.

use boardcast_protocol::{
    Battery, ClockAck, ClockCommand, ClockStatus, ClockTimes, Command, CommandDecoder, Decoded,
    Decoder, EeRecord, Message, RawBoard, SideTime, SquareIndex,
};
use proptest::prelude::*;

fn square() -> impl Strategy<Value = SquareIndex> {
    (0u8..64).prop_map(|i| SquareIndex::new(i).expect("in range"))
}

fn seven_bit() -> impl Strategy<Value = u8> {
    0u8..0x80
}

fn ascii(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(seven_bit(), 0..=max)
        .prop_map(|bytes| bytes.into_iter().map(char::from).collect())
}

fn side_time() -> impl Strategy<Value = SideTime> {
    (0u8..=9, 0u8..=59, 0u8..=59, any::<[bool; 3]>()).prop_map(|(h, m, s, [a, b, c])| SideTime {
        hours: h,
        minutes: m,
        seconds: s,
        flag_fallen: a,
        time_per_move: b,
        flag_shown: c,
    })
}

/// Records in the form the parser produces (an `Unknown` byte never starts a known record).
fn ee_record() -> impl Strategy<Value = EeRecord> {
    prop_oneof![
        (0u8..16, square(), any::<bool>()).prop_map(|(code, square, quick)| {
            EeRecord::FieldChange {
                code,
                square,
                quick,
            }
        }),
        (any::<bool>(), 0u8..=9, 0u8..=59, 0u8..=59)
            .prop_map(|(left, h, m, s)| EeRecord::ClockTime { left, h, m, s }),
        prop::sample::select(vec![
            EeRecord::PowerUp,
            EeRecord::Eof,
            EeRecord::FourRows,
            EeRecord::EmptyBoard,
            EeRecord::Downloaded,
            EeRecord::BeginPos,
            EeRecord::BeginPosRotated,
            EeRecord::StartTag,
            EeRecord::Watchdog,
            EeRecord::Nop,
            EeRecord::Nop2,
        ]),
        prop_oneof![0x01u8..=0x3F, 0x7Du8..=0x7E].prop_map(EeRecord::Unknown),
    ]
}

/// Ids with bit 7 set that have no message of their own.
fn unknown_id() -> impl Strategy<Value = u8> {
    (0x80u8..=0xFF).prop_filter("known id", |id| {
        !matches!(id, 0x86 | 0x8D | 0x8E | 0x8F | 0x90..=0x93 | 0xA0 | 0xA2)
    })
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        prop::array::uniform32(seven_bit())
            .prop_flat_map(|a| (Just(a), prop::array::uniform32(seven_bit())))
            .prop_map(|(a, b)| {
                let mut raw = [0u8; 64];
                raw[..32].copy_from_slice(&a);
                raw[32..].copy_from_slice(&b);
                Message::BoardDump(RawBoard(raw))
            }),
        (square(), seven_bit()).prop_map(|(square, code)| Message::FieldUpdate { square, code }),
        (side_time(), side_time(), seven_bit()).prop_map(|(right, left, status)| {
            Message::ClockTime(ClockTimes {
                right,
                left,
                status: ClockStatus(status),
            })
        }),
        any::<[u8; 4]>().prop_map(|[ack0, ack1, ack2, ack3]| Message::ClockAck(ClockAck {
            ack0,
            ack1,
            ack2,
            ack3
        })),
        ascii(5).prop_map(Message::SerialNumber),
        ascii(64).prop_map(Message::LongSerialNumber),
        ascii(300).prop_map(Message::Trademark),
        (seven_bit(), seven_bit()).prop_map(|(major, minor)| Message::Version { major, minor }),
        (0u16..0x4000).prop_map(Message::BusAddress),
        prop::collection::vec(seven_bit(), 0..=64)
            .prop_map(|bytes| Message::BatteryStatus(Battery { bytes })),
        prop::collection::vec(ee_record(), 0..200).prop_map(Message::EeMoves),
        (unknown_id(), prop::collection::vec(seven_bit(), 0..=64))
            .prop_filter("draughts dumps have a fixed size", |(id, p)| {
                !matches!(id, 0x94 | 0x95) || p.len() == 50
            })
            .prop_map(|(id, payload)| Message::Unknown { id, payload }),
    ]
}

fn clock_command() -> impl Strategy<Value = ClockCommand> {
    prop_oneof![
        (any::<[u8; 6]>(), any::<u8>(), any::<u8>()).prop_map(|(digits, icons, beep)| {
            ClockCommand::Display {
                digits,
                icons,
                beep,
            }
        }),
        any::<[u8; 5]>().prop_map(|icons| ClockCommand::Icons { icons }),
        Just(ClockCommand::End),
        Just(ClockCommand::Button),
        Just(ClockCommand::Version),
        (any::<(u8, u8, u8)>(), any::<(u8, u8, u8)>(), any::<u8>())
            .prop_map(|(left, right, flags)| ClockCommand::SetAndRun { left, right, flags }),
        any::<u8>().prop_map(|units| ClockCommand::Beep { units }),
        (any::<[u8; 8]>(), any::<u8>()).prop_map(|(text, beep)| ClockCommand::Ascii { text, beep }),
        (any::<[u8; 11]>(), any::<u8>())
            .prop_map(|(text, beep)| ClockCommand::Rev2Ascii { text, beep }),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    let singles: Vec<Command> = (0x40u8..=0x55).filter_map(Command::from_byte).collect();
    prop_oneof![
        prop::sample::select(singles),
        any::<[u8; 3]>().prop_map(|[pattern, start, end]| Command::SetLeds {
            pattern,
            start,
            end
        }),
        clock_command().prop_map(Command::Clock),
    ]
}

/// Splits `bytes` at the given cut points (taken modulo the length).
fn chunks<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.push(0);
    points.push(bytes.len());
    points.sort_unstable();
    points
        .windows(2)
        .filter_map(|w| bytes.get(w[0]..w[1]))
        .collect()
}

fn decode_chunked(parts: &[&[u8]]) -> Vec<Decoded> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    for part in parts {
        d.feed(part);
        out.extend(std::iter::from_fn(|| d.poll()));
    }
    out
}

fn commands_chunked(parts: &[&[u8]]) -> Vec<Command> {
    let mut d = CommandDecoder::new();
    let mut out = Vec::new();
    for part in parts {
        d.feed(part);
        out.extend(std::iter::from_fn(|| d.poll()));
    }
    out
}

fn messages_only(out: Vec<Decoded>) -> Vec<Message> {
    out.into_iter()
        .filter_map(|d| match d {
            Decoded::Message(m) => Some(m),
            Decoded::Garbage { .. } => None,
        })
        .collect()
}

proptest! {
    #[test]
    fn messages_round_trip_in_any_chunks(
        msgs in prop::collection::vec(message(), 0..8),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let bytes: Vec<u8> = msgs.iter().flat_map(Message::encode).collect();
        // Only the id bytes have bit 7 set, which is what lets the decoder resynchronise.
        prop_assert_eq!(bytes.iter().filter(|b| **b & 0x80 != 0).count(), msgs.len());
        let expected: Vec<Decoded> = msgs.into_iter().map(Decoded::Message).collect();
        prop_assert_eq!(decode_chunked(&[&bytes]), expected.clone());
        prop_assert_eq!(decode_chunked(&chunks(&bytes, &cuts)), expected);
    }

    #[test]
    fn commands_round_trip_in_any_chunks(
        cmds in prop::collection::vec(command(), 0..12),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let bytes: Vec<u8> = cmds.iter().flat_map(Command::encode).collect();
        prop_assert_eq!(commands_chunked(&[&bytes]), cmds.clone());
        prop_assert_eq!(commands_chunked(&chunks(&bytes, &cuts)), cmds);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_chunking_does_not_matter(
        bytes in prop::collection::vec(any::<u8>(), 0..2000),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let whole = decode_chunked(&[&bytes]);
        prop_assert_eq!(&decode_chunked(&chunks(&bytes, &cuts)), &whole);
        let mut accounted = 0usize;
        for d in &whole {
            match d {
                Decoded::Message(m) => {
                    if let Message::FieldUpdate { square, .. } = m {
                        prop_assert!(square.index() < 64);
                    }
                    // Every decoded message re-encodes to a valid frame, and after one pass
                    // of normalisation (clamping, truncation) encoding is stable.
                    let again = messages_only(decode_chunked(&[&m.encode()]));
                    prop_assert_eq!(again.len(), 1);
                    let normal = again[0].clone();
                    prop_assert_eq!(messages_only(decode_chunked(&[&normal.encode()])), vec![normal]);
                }
                Decoded::Garbage { bytes: n, .. } => {
                    prop_assert!(*n > 0);
                    accounted += n;
                }
            }
        }
        prop_assert!(accounted <= bytes.len());
        let cmds = commands_chunked(&[&bytes]);
        prop_assert_eq!(commands_chunked(&chunks(&bytes, &cuts)), cmds);
    }

    #[test]
    fn recovers_after_bit7_clear_garbage(
        noise in prop::collection::vec(prop::collection::vec(0u8..0x80, 0..20), 1..6),
        msgs in prop::collection::vec(message(), 1..6),
    ) {
        let mut bytes = Vec::new();
        for (junk, m) in noise.iter().zip(&msgs) {
            bytes.extend_from_slice(junk);
            bytes.extend(m.encode());
        }
        let expected: Vec<Message> = msgs.into_iter().take(noise.len()).collect();
        prop_assert_eq!(messages_only(decode_chunked(&[&bytes])), expected);
    }

    #[test]
    fn any_bytes_then_a_valid_frame_yields_that_frame(
        prefix in prop::collection::vec(any::<u8>(), 0..300),
        m in message(),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let mut bytes = prefix;
        bytes.extend(m.encode());
        let out = decode_chunked(&chunks(&bytes, &cuts));
        prop_assert_eq!(out.last(), Some(&Decoded::Message(m)));
    }
}
