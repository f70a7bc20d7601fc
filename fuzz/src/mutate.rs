//! Seeded mutations of byte strings: the classic byte-level ones (bit flips, interesting
//! bytes and integers, insertions, deletions, duplications, splices with another input)
//! and, for text, number and string-token replacements that keep JSON parseable often
//! enough to reach validation.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Largest input a mutation produces.
pub const MAX_LEN: usize = 1 << 20;

/// Integers that sit on boundaries: zero, signs, powers of two around common widths,
/// the extremes of `i32` and `i64`.
const INTERESTING: [i64; 18] = [
    0,
    1,
    -1,
    2,
    3,
    16,
    64,
    255,
    256,
    65535,
    1 << 20,
    1 << 31,
    (1 << 31) - 1,
    1 << 32,
    1 << 40,
    i64::MAX,
    i64::MIN,
    -16,
];

/// Numbers written into JSON in place of a number token.
const NUMBERS: [&str; 16] = [
    "0",
    "-1",
    "1",
    "2",
    "3",
    "7",
    "99",
    "65536",
    "1048576",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e300",
    "0.5",
];

/// Short JSON fragments inserted into text.
const FRAGMENTS: [&str; 14] = [
    "0", "-", "9", ",", "{", "}", "[", "]", "\"", "null", "true", ":", "[0]", "1e9",
];

/// A deterministic source of mutations.
#[derive(Debug)]
pub struct Mutator {
    rng: ChaCha8Rng,
}

impl Mutator {
    /// A mutator whose choices are a function of `seed` only.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A uniform index below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// A uniform `u64`.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.random()
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// `input` with one to eight mutations applied (mostly one or two); `others` are
    /// the inputs a splice may take a piece from; `text` enables the JSON-aware ones.
    pub fn mutate(&mut self, input: &[u8], others: &[Vec<u8>], text: bool) -> Vec<u8> {
        let mut out = input.to_vec();
        let rounds = match self.below(16) {
            0..=9 => 1,
            10..=13 => 2,
            _ => 1 + self.below(8),
        };
        for _ in 0..rounds {
            // Text favours the mutations that keep JSON parseable.
            let choice = if text {
                [0, 2, 3, 4, 5, 7, 7, 7, 8, 8][self.below(10)]
            } else {
                self.below(7)
            };
            match choice {
                0 => self.flip_bit(&mut out),
                1 => self.set_byte(&mut out),
                2 => self.insert(&mut out, text),
                3 => self.delete(&mut out),
                4 => self.duplicate(&mut out),
                5 => self.splice(&mut out, others),
                6 => self.integer(&mut out),
                7 => self.number(&mut out),
                _ => self.swap_string(&mut out),
            }
        }
        out.truncate(MAX_LEN);
        out
    }

    fn flip_bit(&mut self, out: &mut [u8]) {
        if !out.is_empty() {
            let at = self.below(out.len());
            out[at] ^= 1 << self.below(8);
        }
    }

    fn set_byte(&mut self, out: &mut [u8]) {
        if !out.is_empty() {
            let at = self.below(out.len());
            out[at] = match self.below(6) {
                0 => 0,
                1 => 1,
                2 => 0x7F,
                3 => 0x80,
                4 => 0xFF,
                _ => self.below(256) as u8,
            };
        }
    }

    fn insert(&mut self, out: &mut Vec<u8>, text: bool) {
        let at = self.below(out.len() + 1);
        let piece: Vec<u8> = if text && !self.chance(4) {
            FRAGMENTS[self.below(FRAGMENTS.len())].as_bytes().to_vec()
        } else {
            (0..1 + self.below(8))
                .map(|_| self.below(256) as u8)
                .collect()
        };
        out.splice(at..at, piece);
    }

    fn delete(&mut self, out: &mut Vec<u8>) {
        if !out.is_empty() {
            let at = self.below(out.len());
            let len = (1 + self.below(16)).min(out.len() - at);
            out.drain(at..at + len);
        }
    }

    fn duplicate(&mut self, out: &mut Vec<u8>) {
        if !out.is_empty() {
            let from = self.below(out.len());
            let len = (1 + self.below(64)).min(out.len() - from);
            let piece = out[from..from + len].to_vec();
            let at = self.below(out.len() + 1);
            out.splice(at..at, piece);
        }
    }

    fn splice(&mut self, out: &mut Vec<u8>, others: &[Vec<u8>]) {
        if others.is_empty() {
            return self.flip_bit(out);
        }
        let other = &others[self.below(others.len())];
        let keep = self.below(out.len() + 1);
        let from = self.below(other.len() + 1);
        out.truncate(keep);
        out.extend_from_slice(&other[from..]);
    }

    /// Overwrites 1, 2, 4 or 8 bytes (little-endian, at an offset of that alignment
    /// when it fits) with an interesting integer: FlatBuffer offsets, lengths, dims.
    fn integer(&mut self, out: &mut [u8]) {
        let width = [1, 2, 4, 8][self.below(4)];
        if out.len() < width {
            return self.flip_bit(out);
        }
        let slots = (out.len() - width) / width + 1;
        let at = self.below(slots) * width;
        let value = if self.chance(4) {
            self.next_u64() as i64
        } else {
            INTERESTING[self.below(INTERESTING.len())]
        };
        out[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
    }

    /// Replaces a JSON number token with another number.
    fn number(&mut self, out: &mut Vec<u8>) {
        let starts: Vec<usize> = (0..out.len())
            .filter(|&i| {
                (out[i].is_ascii_digit() || out[i] == b'-')
                    && (i == 0 || !(out[i - 1].is_ascii_alphanumeric() || out[i - 1] == b'.'))
            })
            .collect();
        if starts.is_empty() {
            return self.insert(out, true);
        }
        let start = starts[self.below(starts.len())];
        let mut end = start + 1;
        while end < out.len() && (out[end].is_ascii_digit() || b".eE+-".contains(&out[end])) {
            end += 1;
        }
        let replacement = if self.chance(5) {
            (self.next_u64() % 1000).to_string()
        } else {
            NUMBERS[self.below(NUMBERS.len())].to_owned()
        };
        out.splice(start..end, replacement.into_bytes());
    }

    /// Replaces one quoted string with another of the same input (a field name, an enum
    /// value), or drops a key-value pair's value.
    fn swap_string(&mut self, out: &mut Vec<u8>) {
        let quotes: Vec<usize> = (0..out.len()).filter(|&i| out[i] == b'"').collect();
        let strings: Vec<(usize, usize)> = quotes
            .chunks_exact(2)
            .map(|pair| (pair[0], pair[1] + 1))
            .collect();
        if strings.len() < 2 {
            return self.insert(out, true);
        }
        let (a0, a1) = strings[self.below(strings.len())];
        let (b0, b1) = strings[self.below(strings.len())];
        let replacement = out[b0..b1].to_vec();
        out.splice(a0..a1, replacement);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_follow_the_seed() {
        let input = br#"{"dims": [1, 64, 56, 56], "operation": "RELU_FWD", "x": "ADD"}"#;
        let run = |seed| {
            let mut m = Mutator::new(seed);
            (0..50)
                .map(|_| m.mutate(input, &[b"other".to_vec()], true))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().any(|m| m.as_slice() != input));
    }
}
