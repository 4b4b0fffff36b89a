//! Framing by the bit-7 rule, shared by the single-board and the bus decoders.
//!
//! Both of the board's reply formats start with a header byte (bit 7 set) followed by a
//! 14-bit total length in two 7-bit bytes, and no other byte of a frame has bit 7 set. So
//! a header byte always starts a frame: after noise or a cut frame the stream
//! resynchronises on it. What a frame means (and the length limits of each id) is the
//! format's business; this module only cuts the stream into frames.

use std::collections::VecDeque;

/// What the framer made of the queued bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Framed<'a> {
    /// Bytes without bit 7 skipped before a header byte.
    Skipped(usize),
    /// A frame of this many bytes cut short by the next header byte, which stays queued.
    Interrupted(usize),
    /// A header whose claimed total length is outside its id's limits (its 3 bytes are
    /// dropped).
    BadLength {
        /// The id byte.
        id: u8,
        /// The claimed total length.
        total: u16,
    },
    /// A complete frame, header included.
    Frame(&'a [u8]),
}

/// Cuts a byte stream into frames. Each byte is examined once (O(n) overall); apart from
/// bytes queued but not yet polled, only the frame being assembled is buffered, and the
/// length limits bound its size.
#[derive(Debug, Clone, Default)]
pub(crate) struct Framer {
    /// Bytes fed but not yet examined.
    input: VecDeque<u8>,
    /// The frame being assembled, header included.
    frame: Vec<u8>,
    /// The frame's total length once both length bytes are known, else 0.
    expected: usize,
    /// Noise bytes seen since the last header byte, not yet reported.
    skipped: usize,
    /// `frame` was handed out complete and is cleared on the next poll.
    complete: bool,
}

impl Framer {
    /// Queues `bytes`. Nothing is examined until [`Framer::poll`].
    pub fn feed(&mut self, bytes: &[u8]) {
        self.input.extend(bytes);
    }

    /// True while a frame has started but is not complete.
    pub fn in_frame(&self) -> bool {
        !self.complete && !self.frame.is_empty()
    }

    /// The next frame or fault, or `None` when more bytes are needed. `total_limits`
    /// gives the smallest and largest total length (header included) of a frame with
    /// that id.
    pub fn poll(&mut self, total_limits: impl Fn(u8) -> (usize, usize)) -> Option<Framed<'_>> {
        if std::mem::take(&mut self.complete) {
            self.reset();
        }
        while let Some(&byte) = self.input.front() {
            let is_header = byte & 0x80 != 0;
            if self.frame.is_empty() {
                if !is_header {
                    self.input.pop_front();
                    self.skipped += 1;
                    continue;
                }
                if self.skipped > 0 {
                    // Report the noise before starting the frame; the header stays queued.
                    return Some(Framed::Skipped(std::mem::take(&mut self.skipped)));
                }
            } else if is_header {
                let bytes = self.frame.len();
                self.reset();
                return Some(Framed::Interrupted(bytes));
            }
            self.input.pop_front();
            self.frame.push(byte);
            if let &[id, hi, lo] = self.frame.as_slice() {
                let total = usize::from(hi) << 7 | usize::from(lo);
                let (min, max) = total_limits(id);
                if !(min..=max).contains(&total) {
                    self.reset();
                    // total < 2^14, so it always fits in u16.
                    let total = u16::try_from(total).unwrap_or(u16::MAX);
                    return Some(Framed::BadLength { id, total });
                }
                self.expected = total;
            }
            if self.frame.len() == self.expected {
                self.complete = true;
                return Some(Framed::Frame(&self.frame));
            }
        }
        None
    }

    fn reset(&mut self) {
        self.frame.clear();
        self.expected = 0;
    }
}
