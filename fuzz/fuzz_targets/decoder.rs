//! Fuzz target: the host-side `Decoder` (and the board-side `CommandDecoder`) fed
//! arbitrary bytes in arbitrary chunks must never panic and must keep their invariants.

#![no_main]

use boardcast_protocol::{CommandDecoder, Decoded, Decoder, Message};
use libfuzzer_sys::fuzz_target;

/// The largest frame the decoder accepts (the EE_MOVES cap plus the header).
const MAX_FRAME: usize = 0x2000 + 3;

/// Cuts `bytes` into chunks of 1..=64 bytes whose sizes come from a small xorshift
/// generator seeded by the fuzzer, so the input decides the split as well as the bytes.
fn chunks(seed: u8, bytes: &[u8]) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 0x100;
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = (state % 64 + 1) as usize;
        let (head, tail) = rest.split_at(len.min(rest.len()));
        out.push(head);
        rest = tail;
    }
    out
}

fn decode(parts: &[&[u8]]) -> Vec<Decoded> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    for part in parts {
        d.feed(part);
        while let Some(x) = d.poll() {
            out.push(x);
        }
    }
    out
}

fn messages(bytes: &[u8]) -> Vec<Message> {
    decode(&[bytes])
        .into_iter()
        .filter_map(|d| match d {
            Decoded::Message(m) => Some(m),
            Decoded::Garbage { .. } => None,
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let whole = decode(&[stream]);
    // The result must not depend on how the stream was split.
    assert_eq!(decode(&chunks(seed, stream)), whole);

    let mut garbage = 0usize;
    for d in &whole {
        match d {
            Decoded::Message(m) => {
                if let Message::FieldUpdate { square, .. } = m {
                    assert!(square.index() < 64);
                }
                // A decoded message re-encodes to one valid frame of bounded size, and
                // after one normalisation pass encoding is stable.
                let frame = m.encode();
                assert!(frame.len() <= MAX_FRAME);
                assert!(frame.iter().skip(1).all(|b| b & 0x80 == 0));
                let again = messages(&frame);
                assert_eq!(again.len(), 1);
                assert_eq!(messages(&again[0].encode()), again);
            }
            Decoded::Garbage { bytes, .. } => {
                assert!(*bytes > 0);
                garbage += bytes;
            }
        }
    }
    assert!(garbage <= stream.len());

    // The board-side decoder gets the same bytes: no panic, same result in chunks.
    let commands = |parts: &[&[u8]]| {
        let mut d = CommandDecoder::new();
        let mut out = Vec::new();
        for part in parts {
            d.feed(part);
            while let Some(c) = d.poll() {
                out.push(c);
            }
        }
        out
    };
    assert_eq!(commands(&chunks(seed, stream)), commands(&[stream]));
});
