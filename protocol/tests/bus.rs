//! Property tests of the bus codec: replies and commands survive any chunking, garbage
//! never panics a decoder, and a decoder finds the next frame after garbage.

use boardcast_protocol::{
    BusAddress, BusCommand, BusCommandDecoder, BusCommandKind, BusDecoded, BusDecoder, BusInput,
    BusMessage, BusReply, ClockStatus, ClockTimes, EeRecord, RawBoard, SquareIndex,
};
use proptest::prelude::*;

fn address() -> impl Strategy<Value = BusAddress> {
    (0u16..0x4000).prop_map(BusAddress::new)
}

fn record() -> impl Strategy<Value = EeRecord> {
    prop_oneof![
        (0u8..16, 0u8..64, any::<bool>()).prop_map(|(code, sq, quick)| EeRecord::FieldChange {
            code,
            square: SquareIndex::new(sq).expect("in range"),
            quick,
        }),
        (any::<bool>(), 0u8..=9, 0u8..=59, 0u8..=59)
            .prop_map(|(left, h, m, s)| EeRecord::ClockTime { left, h, m, s }),
        prop::sample::select(vec![
            EeRecord::PowerUp,
            EeRecord::BeginPos,
            EeRecord::StartTag,
            EeRecord::Nop,
            EeRecord::Eof,
        ]),
    ]
}

fn message() -> impl Strategy<Value = BusMessage> {
    prop_oneof![
        prop::collection::vec(0u8..0x80, 64).prop_map(|codes| {
            let mut raw = [0u8; 64];
            raw.copy_from_slice(&codes);
            BusMessage::BoardDump(RawBoard(raw))
        }),
        prop::collection::vec(record(), 0..60).prop_map(BusMessage::Update),
        prop::collection::vec(record(), 0..60).prop_map(BusMessage::FromStart),
        Just(BusMessage::Ping),
        Just(BusMessage::StartGameWritten),
        Just(BusMessage::Version(None)),
        (0u8..0x80, 0u8..0x80).prop_map(|v| BusMessage::Version(Some(v))),
        (0u8..0x80).prop_map(|status| BusMessage::ClockTime(ClockTimes {
            status: ClockStatus(status),
            ..ClockTimes::default()
        })),
        (0x8Au8..=0xFF, prop::collection::vec(0u8..0x80, 0..40))
            .prop_map(|(id, data)| BusMessage::Unknown { id, data }),
    ]
}

fn reply() -> impl Strategy<Value = BusReply> {
    (address(), message()).prop_map(|(address, message)| BusReply { address, message })
}

/// Splits `bytes` at the given cut points (taken modulo the length).
fn chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| c % (bytes.len() + 1))
        .chain([0, bytes.len()])
        .collect();
    points.sort_unstable();
    points
        .windows(2)
        .map(|w| bytes[w[0]..w[1]].to_vec())
        .collect()
}

fn decode_chunked(bytes: &[u8], cuts: &[usize]) -> Vec<BusDecoded> {
    let mut d = BusDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks(bytes, cuts) {
        d.feed(&chunk);
        out.extend(std::iter::from_fn(|| d.poll()));
    }
    out
}

proptest! {
    #[test]
    fn replies_round_trip_in_any_chunks(
        replies in prop::collection::vec(reply(), 1..8),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let bytes: Vec<u8> = replies.iter().flat_map(BusReply::encode).collect();
        let decoded = decode_chunked(&bytes, &cuts);
        let want: Vec<BusDecoded> = replies.into_iter().map(BusDecoded::Reply).collect();
        prop_assert_eq!(decoded, want);
    }

    #[test]
    fn garbage_never_panics_and_the_next_frame_decodes(
        garbage in prop::collection::vec(any::<u8>(), 0..300),
        next in reply(),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let mut bytes = garbage;
        // A byte with bit 7 set ends any partial frame the garbage left open.
        let frame = next.encode();
        bytes.extend_from_slice(&frame);
        let decoded = decode_chunked(&bytes, &cuts);
        let total: usize = decoded.iter().map(|d| match d {
            BusDecoded::Reply(r) => r.encode().len(),
            BusDecoded::ChecksumError { bytes, .. } | BusDecoded::Garbage { bytes, .. } => *bytes,
        }).sum();
        prop_assert!(total <= bytes.len());
        prop_assert_eq!(decoded.last(), Some(&BusDecoded::Reply(next)));
    }

    #[test]
    fn a_corrupted_checksum_is_reported_not_decoded(r in reply(), flip in 1u8..0x80) {
        let mut bytes = r.encode();
        let last = bytes.len() - 1;
        bytes[last] ^= flip;
        let decoded = decode_chunked(&bytes, &[]);
        let reported = matches!(
            decoded.as_slice(),
            [BusDecoded::ChecksumError { address, .. }] if *address == r.address
        );
        prop_assert!(reported, "{:?}", decoded);
    }

    #[test]
    fn commands_round_trip_among_single_bytes(
        items in prop::collection::vec(
            prop_oneof![
                (0usize..13, address()).prop_map(|(k, a)| Ok(BusCommand::new(BusCommandKind::ALL[k], a))),
                (0u8..0x80).prop_map(Err),
            ],
            0..30,
        ),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let mut bytes = Vec::new();
        for item in &items {
            match item {
                Ok(cmd) => bytes.extend_from_slice(&cmd.encode()),
                Err(b) => bytes.push(*b),
            }
        }
        let mut d = BusCommandDecoder::new();
        let mut out = Vec::new();
        for chunk in chunks(&bytes, &cuts) {
            d.feed(&chunk);
            out.extend(std::iter::from_fn(|| d.poll()));
        }
        let want: Vec<BusInput> = items
            .iter()
            .map(|i| match i {
                Ok(cmd) => BusInput::Command(*cmd),
                Err(b) => BusInput::Single(*b),
            })
            .collect();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn command_decoder_is_total(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut d = BusCommandDecoder::new();
        d.feed(&bytes);
        let consumed: usize = std::iter::from_fn(|| d.poll()).map(|i| match i {
            BusInput::Command(_) | BusInput::BadChecksum { .. } => 4,
            BusInput::Single(_) => 1,
            BusInput::Dropped { bytes } => bytes,
        }).sum();
        prop_assert!(consumed <= bytes.len());
    }
}
