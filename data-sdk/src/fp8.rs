//! 8-bit floating-point storage types.
//!
//! Each type is a `#[repr(transparent)]` wrapper around the raw byte, so a
//! `&[F8E4M3]` has the layout of the device buffer it describes. They are
//! *storage* types: the only arithmetic they offer is conversion to and from
//! `f32`. Compute in `f32` and convert at the edges.
//!
//! | type | exponent / mantissa bits | bias | infinities | NaN | negative zero | largest finite |
//! |---|---|---|---|---|---|---|
//! | [`F8E4M3`] (OCP E4M3) | 4 / 3 | 7 | none | `S.1111.111` | yes | 448 |
//! | [`F8E5M2`] (OCP E5M2) | 5 / 2 | 15 | `S.11111.00` | `S.11111.{01,10,11}` | yes | 57344 |
//! | [`F8E4M3Fnuz`] | 4 / 3 | 8 | none | `0x80` only | no | 240 |
//! | [`F8E5M2Fnuz`] | 5 / 2 | 16 | none | `0x80` only | no | 57344 |
//! | [`F8E8M0`] (OCP MX scale) | 8 / 0, unsigned | 127 | none | `0xFF` | no zero at all | 2^127 |
//!
//! # Rounding and overflow in `from_f32`
//!
//! Every `from_f32` rounds to the nearest representable value, ties to the
//! encoding whose last bit is 0 (round-to-nearest-even). What happens to values
//! beyond the largest finite one differs, and is a choice of this crate:
//!
//! * [`F8E4M3`], [`F8E4M3Fnuz`] and [`F8E5M2Fnuz`] **saturate**: anything that
//!   rounds past the largest finite magnitude, infinities included, becomes
//!   ±max. These formats have no infinity, and turning an overflow into NaN
//!   would poison a whole reduction; this is the "saturating" conversion of the
//!   OCP FP8 specification and what quantising kernels normally want.
//! * [`F8E5M2`] behaves like IEEE 754: overflow becomes ±infinity, exactly as
//!   converting to `f16` and dropping the low byte would.
//! * [`F8E8M0`] saturates at both ends: zero and positive values below 2^-127
//!   become 2^-127, values above 2^127 (and +∞) become 2^127. Negative non-zero
//!   values cannot be represented and become NaN, like NaN itself. The rounding
//!   is to the nearest power of two on the linear scale (1.5·2^k is the tie).
//!
//! NaN always encodes as the type's canonical NaN (sign kept where the format
//! has one). FNUZ types have no negative zero, so `-0.0` encodes as `+0`.
//!
//! # Equality
//!
//! `PartialEq`, `Eq` and `Hash` compare the stored bits, as befits storage
//! types: two NaN encodings are equal to themselves, and `-0` differs from `+0`.
//! Compare `to_f32()` values for numeric equality.

use std::fmt;

/// Behaviour of a sign-magnitude format past its largest finite value.
#[derive(Clone, Copy)]
enum Overflow {
    /// Clamp to the largest finite magnitude.
    Saturate,
    /// Encode infinity, whose magnitude code is given.
    Infinity(u8),
}

/// Parameters of a sign-magnitude 8-bit float (1 sign bit, `EXP + MAN = 7`).
#[derive(Clone, Copy)]
struct Format {
    man_bits: u32,
    bias: i32,
    /// Largest magnitude code (sign bit clear) that encodes a finite value.
    max_code: u8,
    overflow: Overflow,
    /// FNUZ layout: `0x80` is the only NaN and there is no negative zero.
    fnuz: bool,
    /// Magnitude code of the canonical NaN for non-FNUZ formats.
    nan_code: u8,
}

const E4M3: Format = Format {
    man_bits: 3,
    bias: 7,
    max_code: 0x7E,
    overflow: Overflow::Saturate,
    fnuz: false,
    nan_code: 0x7F,
};

const E5M2: Format = Format {
    man_bits: 2,
    bias: 15,
    max_code: 0x7B,
    overflow: Overflow::Infinity(0x7C),
    fnuz: false,
    nan_code: 0x7E,
};

const E4M3_FNUZ: Format = Format {
    man_bits: 3,
    bias: 8,
    max_code: 0x7F,
    overflow: Overflow::Saturate,
    fnuz: true,
    nan_code: 0,
};

const E5M2_FNUZ: Format = Format {
    man_bits: 2,
    bias: 16,
    max_code: 0x7F,
    overflow: Overflow::Saturate,
    fnuz: true,
    nan_code: 0,
};

const F32_SIGN: u32 = 0x8000_0000;
const F32_ABS: u32 = 0x7FFF_FFFF;
const F32_INF: u32 = 0x7F80_0000;
const F32_QNAN: u32 = 0x7FC0_0000;
const F32_MAN: u32 = 0x007F_FFFF;
const F32_IMPLICIT: u32 = 0x0080_0000;

/// 2^k as an `f32`, for `k` in the normal range `-126..=127`.
const fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `v >> s`, rounded to nearest with ties to even; `s` in `0..=31`.
const fn shr_round_even(v: u32, s: u32) -> u32 {
    if s == 0 {
        return v;
    }
    let q = v >> s;
    let rem = v & ((1u32 << s) - 1);
    let half = 1u32 << (s - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

const fn decode(fmt: Format, bits: u8) -> f32 {
    let sign = if bits & 0x80 != 0 { F32_SIGN } else { 0 };
    let mag = bits & 0x7F;
    if fmt.fnuz {
        if bits == 0x80 {
            return f32::from_bits(F32_QNAN);
        }
    } else if mag > fmt.max_code {
        return match fmt.overflow {
            Overflow::Infinity(inf) if mag == inf => f32::from_bits(sign | F32_INF),
            _ => f32::from_bits(sign | F32_QNAN),
        };
    }
    let exp = (mag >> fmt.man_bits) as i32;
    let man = (mag & ((1 << fmt.man_bits) - 1)) as u32;
    let abs = if exp == 0 {
        // Subnormal: man · 2^(1 - bias - man_bits). Both factors are exact in
        // f32 and so is their product.
        (man as f32) * pow2(1 - fmt.bias - fmt.man_bits as i32)
    } else {
        f32::from_bits((((exp - fmt.bias + 127) as u32) << 23) | (man << (23 - fmt.man_bits)))
    };
    f32::from_bits(abs.to_bits() | sign)
}

const fn encode(fmt: Format, x: f32) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    let abs = bits & F32_ABS;
    if abs > F32_INF {
        return if fmt.fnuz { 0x80 } else { sign | fmt.nan_code };
    }
    let emin = 1 - fmt.bias;
    let code: u32 = if abs == F32_INF {
        u32::MAX
    } else if abs < F32_IMPLICIT {
        // Zero or an f32 subnormal: below half the smallest subnormal of every
        // format here, so it rounds to zero.
        0
    } else {
        let e = (abs >> 23) as i32 - 127;
        let shift = 23 - fmt.man_bits;
        if e >= emin {
            // Re-bias the exponent in place; rounding the whole word lets a
            // mantissa carry ripple into the exponent field for free.
            shr_round_even((((e + fmt.bias) as u32) << 23) | (abs & F32_MAN), shift)
        } else {
            let s = shift + (emin - e) as u32;
            if s > 31 {
                0
            } else {
                // Subnormal result: shift the full significand; a carry into
                // bit `man_bits` lands exactly on the smallest normal code.
                shr_round_even((abs & F32_MAN) | F32_IMPLICIT, s)
            }
        }
    };
    let mag = if code > fmt.max_code as u32 {
        match fmt.overflow {
            Overflow::Saturate => fmt.max_code,
            Overflow::Infinity(inf) => inf,
        }
    } else {
        code as u8
    };
    if fmt.fnuz && mag == 0 {
        return 0;
    }
    sign | mag
}

const fn e8m0_decode(bits: u8) -> f32 {
    match bits {
        0xFF => f32::from_bits(F32_QNAN),
        // 2^-127 is an f32 subnormal: only the top mantissa bit set.
        0 => f32::from_bits(0x0040_0000),
        e => f32::from_bits((e as u32) << 23),
    }
}

const fn e8m0_encode(x: f32) -> u8 {
    let bits = x.to_bits();
    let abs = bits & F32_ABS;
    if abs > F32_INF {
        return 0xFF;
    }
    if abs == 0 {
        return 0x00;
    }
    if bits & F32_SIGN != 0 {
        return 0xFF;
    }
    if abs == F32_INF {
        return 0xFE;
    }
    let e = abs >> 23;
    let f = abs & F32_MAN;
    let code = if e == 0 {
        // f32 subnormal, value f · 2^-149. Code 0 is f = 0x40_0000 (2^-127)
        // and code 1 is 2^-126; their midpoint is f = 0x60_0000 and the tie
        // goes to the even code 0. Anything smaller saturates to code 0.
        if f > 0x0060_0000 { 1 } else { 0 }
    } else if f > 0x0040_0000 || (f == 0x0040_0000 && e & 1 == 1) {
        // Between 2^(e-127) and 2^(e-126); the midpoint is mantissa 0.5.
        e + 1
    } else {
        e
    };
    if code >= 0xFF { 0xFE } else { code as u8 }
}

macro_rules! fp8_common {
    ($name:ident, $dec:path, $enc:path) => {
        impl $name {
            /// Wraps a raw byte without interpreting it.
            #[inline]
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The raw byte.
            #[inline]
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// The exact value as an `f32` (every value of this format is
            /// representable in `f32`).
            #[inline]
            pub const fn to_f32(self) -> f32 {
                $dec(self.0)
            }

            /// Rounds an `f32` to this format; see the [module docs](self) for
            /// the rounding and overflow rules.
            #[inline]
            pub const fn from_f32(x: f32) -> Self {
                Self($enc(x))
            }

            /// True if this encodes NaN.
            #[inline]
            pub const fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }

            /// True if this encodes neither NaN nor an infinity.
            #[inline]
            pub const fn is_finite(self) -> bool {
                self.to_f32().is_finite()
            }
        }

        impl From<$name> for f32 {
            #[inline]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    concat!(stringify!($name), "({:#04x} = {:?})"),
                    self.0,
                    self.to_f32()
                )
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
}

macro_rules! fp8_signed {
    (
        $(#[$doc:meta])*
        $name:ident, $fmt:expr,
        one = $one:literal, min_positive = $minp:literal, nan = $nan:literal
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name(u8);

        impl $name {
            /// +0.
            pub const ZERO: Self = Self(0x00);
            /// 1.0.
            pub const ONE: Self = Self($one);
            /// The largest finite value.
            pub const MAX: Self = Self($fmt.max_code);
            /// The most negative finite value (`-MAX`).
            pub const MIN: Self = Self($fmt.max_code | 0x80);
            /// The smallest positive normal value.
            pub const MIN_POSITIVE: Self = Self($minp);
            /// The smallest positive subnormal value.
            pub const MIN_POSITIVE_SUBNORMAL: Self = Self(0x01);
            /// The canonical NaN.
            pub const NAN: Self = Self($nan);
        }

        impl $name {
            const fn decode_bits(bits: u8) -> f32 {
                decode($fmt, bits)
            }

            const fn encode_f32(x: f32) -> u8 {
                encode($fmt, x)
            }
        }

        fp8_common!($name, Self::decode_bits, Self::encode_f32);
    };
}

fp8_signed! {
    /// OCP FP8 E4M3 ("E4M3FN"): bias 7, no infinities, NaN when all seven
    /// magnitude bits are set, range ±448. Wire type [`DataType::Fp8E4m3`](crate::DataType::Fp8E4m3).
    ///
    /// `from_f32` saturates (see the [module docs](self)).
    F8E4M3, E4M3, one = 0x38, min_positive = 0x08, nan = 0x7F
}

fp8_signed! {
    /// OCP FP8 E5M2: bias 15, IEEE-style infinities and NaNs, range ±57344.
    /// Wire type [`DataType::Fp8E5m2`](crate::DataType::Fp8E5m2).
    ///
    /// `from_f32` overflows to infinity (see the [module docs](self)).
    F8E5M2, E5M2, one = 0x3C, min_positive = 0x04, nan = 0x7E
}

fp8_signed! {
    /// FP8 E4M3 FNUZ (finite, no negative zero, as on AMD CDNA3): bias 8, no
    /// infinities, `0x80` is the only NaN, range ±240. Wire type
    /// [`DataType::Fp8E4m3Fnuz`](crate::DataType::Fp8E4m3Fnuz).
    ///
    /// `from_f32` saturates (see the [module docs](self)).
    F8E4M3Fnuz, E4M3_FNUZ, one = 0x40, min_positive = 0x08, nan = 0x80
}

fp8_signed! {
    /// FP8 E5M2 FNUZ (finite, no negative zero, as on AMD CDNA3): bias 16, no
    /// infinities, `0x80` is the only NaN, range ±57344. Wire type
    /// [`DataType::Fp8E5m2Fnuz`](crate::DataType::Fp8E5m2Fnuz).
    ///
    /// `from_f32` saturates (see the [module docs](self)).
    F8E5M2Fnuz, E5M2_FNUZ, one = 0x40, min_positive = 0x04, nan = 0x80
}

impl F8E5M2 {
    /// +∞.
    pub const INFINITY: Self = Self(0x7C);
    /// -∞.
    pub const NEG_INFINITY: Self = Self(0xFC);
}

/// OCP MX E8M0 scale: an unsigned power of two 2^(bits - 127) for bits in
/// `0..=254`, and NaN for `0xFF`. There is no zero and no sign. Wire type
/// [`DataType::Fp8E8m0`](crate::DataType::Fp8E8m0).
///
/// `Default` is [`F8E8M0::ONE`] (a neutral scale), not the all-zero byte.
/// See the [module docs](self) for how `from_f32` rounds and saturates.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F8E8M0(u8);

impl F8E8M0 {
    /// 1.0 = 2^0.
    pub const ONE: Self = Self(0x7F);
    /// The largest value, 2^127.
    pub const MAX: Self = Self(0xFE);
    /// The smallest value, 2^-127.
    pub const MIN_POSITIVE: Self = Self(0x00);
    /// NaN.
    pub const NAN: Self = Self(0xFF);
}

impl Default for F8E8M0 {
    fn default() -> Self {
        Self::ONE
    }
}

fp8_common!(F8E8M0, e8m0_decode, e8m0_encode);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p2(k: i32) -> f32 {
        2f32.powi(k)
    }

    #[test]
    fn e4m3_known_values() {
        assert_eq!(F8E4M3::from_bits(0x7E).to_f32(), 448.0);
        assert_eq!(F8E4M3::from_bits(0xFE).to_f32(), -448.0);
        assert_eq!(F8E4M3::from_bits(0x38).to_f32(), 1.0);
        assert_eq!(F8E4M3::from_bits(0x08).to_f32(), p2(-6));
        assert_eq!(F8E4M3::from_bits(0x07).to_f32(), 7.0 * p2(-9));
        assert_eq!(F8E4M3::from_bits(0x01).to_f32(), p2(-9));
        assert_eq!(F8E4M3::from_bits(0x40).to_f32(), 2.0);
        assert_eq!(F8E4M3::from_bits(0x3C).to_f32(), 1.5);
        assert!(F8E4M3::from_bits(0x7F).is_nan());
        assert!(F8E4M3::from_bits(0xFF).is_nan());
        // 0x78 (exponent all ones, mantissa 0) is an ordinary number: 256.
        assert_eq!(F8E4M3::from_bits(0x78).to_f32(), 256.0);
        let neg_zero = F8E4M3::from_bits(0x80).to_f32();
        assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
        assert_eq!(F8E4M3::MAX.to_f32(), 448.0);
        assert_eq!(F8E4M3::MIN.to_f32(), -448.0);
        assert_eq!(F8E4M3::ONE.to_f32(), 1.0);
        assert_eq!(F8E4M3::MIN_POSITIVE.to_f32(), p2(-6));
    }

    #[test]
    fn e5m2_known_values() {
        assert_eq!(F8E5M2::from_bits(0x7B).to_f32(), 57344.0);
        assert_eq!(F8E5M2::from_bits(0x3C).to_f32(), 1.0);
        assert_eq!(F8E5M2::from_bits(0x04).to_f32(), p2(-14));
        assert_eq!(F8E5M2::from_bits(0x01).to_f32(), p2(-16));
        assert_eq!(F8E5M2::from_bits(0x03).to_f32(), 3.0 * p2(-16));
        assert_eq!(F8E5M2::from_bits(0x7C).to_f32(), f32::INFINITY);
        assert_eq!(F8E5M2::from_bits(0xFC).to_f32(), f32::NEG_INFINITY);
        for b in [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF] {
            assert!(F8E5M2::from_bits(b).is_nan(), "{b:#x}");
        }
        assert!(!F8E5M2::INFINITY.is_finite());
        assert!(!F8E5M2::INFINITY.is_nan());
    }

    #[test]
    fn e5m2_is_the_high_byte_of_f16() {
        for b in 0..=255u8 {
            let via_f16 = half::f16::from_bits(u16::from(b) << 8).to_f32();
            let ours = F8E5M2::from_bits(b).to_f32();
            assert!(
                via_f16.to_bits() == ours.to_bits() || (via_f16.is_nan() && ours.is_nan()),
                "{b:#x}: {via_f16} vs {ours}"
            );
        }
    }

    #[test]
    fn fnuz_known_values() {
        assert_eq!(F8E4M3Fnuz::from_bits(0x7F).to_f32(), 240.0);
        assert_eq!(F8E4M3Fnuz::from_bits(0xFF).to_f32(), -240.0);
        assert_eq!(F8E4M3Fnuz::from_bits(0x40).to_f32(), 1.0);
        assert_eq!(F8E4M3Fnuz::from_bits(0x08).to_f32(), p2(-7));
        assert_eq!(F8E4M3Fnuz::from_bits(0x01).to_f32(), p2(-10));
        assert!(F8E4M3Fnuz::from_bits(0x80).is_nan());
        assert_eq!(F8E5M2Fnuz::from_bits(0x7F).to_f32(), 57344.0);
        assert_eq!(F8E5M2Fnuz::from_bits(0x7C).to_f32(), 32768.0);
        assert_eq!(F8E5M2Fnuz::from_bits(0x40).to_f32(), 1.0);
        assert_eq!(F8E5M2Fnuz::from_bits(0x04).to_f32(), p2(-15));
        assert_eq!(F8E5M2Fnuz::from_bits(0x01).to_f32(), p2(-17));
        assert!(F8E5M2Fnuz::from_bits(0x80).is_nan());
        // Every other byte of an FNUZ format is finite.
        for b in (0..=255u8).filter(|&b| b != 0x80) {
            assert!(F8E4M3Fnuz::from_bits(b).is_finite());
            assert!(F8E5M2Fnuz::from_bits(b).is_finite());
        }
    }

    #[test]
    fn e8m0_known_values() {
        assert_eq!(F8E8M0::from_bits(0x7F).to_f32(), 1.0);
        assert_eq!(F8E8M0::from_bits(0x80).to_f32(), 2.0);
        assert_eq!(F8E8M0::from_bits(0x00).to_f32(), p2(-127));
        assert_eq!(F8E8M0::from_bits(0xFE).to_f32(), p2(127));
        assert!(F8E8M0::from_bits(0xFF).is_nan());
        assert_eq!(F8E8M0::default(), F8E8M0::ONE);
    }

    #[test]
    fn from_f32_rounding_and_overflow() {
        // E4M3: saturating.
        assert_eq!(F8E4M3::from_f32(448.0).to_bits(), 0x7E);
        assert_eq!(F8E4M3::from_f32(1000.0).to_bits(), 0x7E);
        assert_eq!(F8E4M3::from_f32(f32::INFINITY).to_bits(), 0x7E);
        assert_eq!(F8E4M3::from_f32(f32::NEG_INFINITY).to_bits(), 0xFE);
        assert_eq!(F8E4M3::from_f32(f32::NAN).to_bits(), 0x7F);
        assert_eq!(F8E4M3::from_f32(-f32::NAN).to_bits(), 0xFF);
        // 1 + 1/16 is halfway between 1 and 1.125: ties to even (1.0).
        assert_eq!(F8E4M3::from_f32(1.0625).to_bits(), 0x38);
        // 1.125 + 1/16 is halfway between 1.125 and 1.25: even is 1.25.
        assert_eq!(F8E4M3::from_f32(1.1875).to_bits(), 0x3A);
        assert_eq!(F8E4M3::from_f32(p2(-10)).to_bits(), 0x00);
        assert_eq!(F8E4M3::from_f32(p2(-10) * 1.01).to_bits(), 0x01);
        assert_eq!(F8E4M3::from_f32(-0.0).to_bits(), 0x80);
        // E5M2: IEEE overflow to infinity, ties to even at the boundary.
        assert_eq!(F8E5M2::from_f32(57344.0).to_bits(), 0x7B);
        assert_eq!(F8E5M2::from_f32(61439.0).to_bits(), 0x7B);
        assert_eq!(F8E5M2::from_f32(61440.0).to_bits(), 0x7C);
        assert_eq!(F8E5M2::from_f32(-1e9).to_bits(), 0xFC);
        assert_eq!(F8E5M2::from_f32(f32::NAN).to_bits(), 0x7E);
        // FNUZ: saturating, no negative zero, one NaN.
        assert_eq!(F8E4M3Fnuz::from_f32(300.0).to_bits(), 0x7F);
        assert_eq!(F8E4M3Fnuz::from_f32(-f32::INFINITY).to_bits(), 0xFF);
        assert_eq!(F8E4M3Fnuz::from_f32(-0.0).to_bits(), 0x00);
        assert_eq!(F8E4M3Fnuz::from_f32(-p2(-20)).to_bits(), 0x00);
        assert_eq!(F8E4M3Fnuz::from_f32(-f32::NAN).to_bits(), 0x80);
        assert_eq!(F8E5M2Fnuz::from_f32(1e6).to_bits(), 0x7F);
        assert_eq!(F8E5M2Fnuz::from_f32(f32::NAN).to_bits(), 0x80);
        // E8M0.
        assert_eq!(F8E8M0::from_f32(1.0).to_bits(), 0x7F);
        assert_eq!(F8E8M0::from_f32(1.4).to_bits(), 0x7F);
        assert_eq!(F8E8M0::from_f32(1.6).to_bits(), 0x80);
        assert_eq!(F8E8M0::from_f32(1.5).to_bits(), 0x80); // tie, 0x80 is even
        assert_eq!(F8E8M0::from_f32(3.0).to_bits(), 0x80); // tie, 0x80 is even
        assert_eq!(F8E8M0::from_f32(0.0).to_bits(), 0x00);
        assert_eq!(F8E8M0::from_f32(f32::MAX).to_bits(), 0xFE);
        assert_eq!(F8E8M0::from_f32(f32::INFINITY).to_bits(), 0xFE);
        assert_eq!(F8E8M0::from_f32(-2.0).to_bits(), 0xFF);
        assert_eq!(F8E8M0::from_f32(f32::NAN).to_bits(), 0xFF);
    }

    #[test]
    fn conversions_are_usable_in_const_context() {
        const M: f32 = F8E4M3::MAX.to_f32();
        const B: F8E5M2 = F8E5M2::from_f32(2.0);
        assert_eq!(M, 448.0);
        assert_eq!(B.to_bits(), 0x40);
    }

    /// Everything the reference encoder needs to know about a format.
    struct Spec {
        decode: fn(u8) -> f32,
        encode: fn(f32) -> u8,
        /// Largest finite magnitude code.
        max_code: u8,
        /// Value of `max_code + 1` if the exponent range were unbounded.
        next_value: f64,
        /// Result for magnitudes that round past `max_code`.
        overflow_code: u8,
        signed_zero: bool,
    }

    const SPECS: [(&str, Spec); 4] = [
        (
            "e4m3",
            Spec {
                decode: |b| F8E4M3::from_bits(b).to_f32(),
                encode: |x| F8E4M3::from_f32(x).to_bits(),
                max_code: 0x7E,
                next_value: 480.0,
                overflow_code: 0x7E,
                signed_zero: true,
            },
        ),
        (
            "e5m2",
            Spec {
                decode: |b| F8E5M2::from_bits(b).to_f32(),
                encode: |x| F8E5M2::from_f32(x).to_bits(),
                max_code: 0x7B,
                next_value: 65536.0,
                overflow_code: 0x7C,
                signed_zero: true,
            },
        ),
        (
            "e4m3fnuz",
            Spec {
                decode: |b| F8E4M3Fnuz::from_bits(b).to_f32(),
                encode: |x| F8E4M3Fnuz::from_f32(x).to_bits(),
                max_code: 0x7F,
                next_value: 256.0,
                overflow_code: 0x7F,
                signed_zero: false,
            },
        ),
        (
            "e5m2fnuz",
            Spec {
                decode: |b| F8E5M2Fnuz::from_bits(b).to_f32(),
                encode: |x| F8E5M2Fnuz::from_f32(x).to_bits(),
                max_code: 0x7F,
                next_value: 65536.0,
                overflow_code: 0x7F,
                signed_zero: false,
            },
        ),
    ];

    /// Brute force: nearest candidate, ties to the even code.
    fn reference_encode(spec: &Spec, x: f32) -> u8 {
        assert!(!x.is_nan());
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        let mag = f64::from(x).abs();
        let mut candidates: Vec<(u8, f64)> = (0..=spec.max_code)
            .map(|c| (c, f64::from((spec.decode)(c))))
            .collect();
        candidates.push((spec.max_code + 1, spec.next_value));
        let mut best = candidates[0];
        for &(c, v) in &candidates[1..] {
            let (d, bd) = ((v - mag).abs(), (best.1 - mag).abs());
            if d < bd || (d == bd && c % 2 == 0) {
                best = (c, v);
            }
        }
        let code = if best.0 > spec.max_code || mag.is_infinite() {
            spec.overflow_code
        } else {
            best.0
        };
        if code == 0 && !spec.signed_zero {
            0
        } else {
            sign | code
        }
    }

    /// Test points: every value, every midpoint and its neighbours.
    fn probe_points(spec: &Spec) -> Vec<f32> {
        let mut mags: Vec<f64> = (0..=spec.max_code)
            .map(|c| f64::from((spec.decode)(c)))
            .collect();
        mags.push(spec.next_value);
        let mut pts = vec![0.0, f32::MIN_POSITIVE, 1e-30, 1e30, f32::MAX, f32::INFINITY];
        for w in mags.windows(2) {
            let mid = ((w[0] + w[1]) / 2.0) as f32;
            pts.extend([w[0] as f32, mid, mid.next_up(), mid.next_down()]);
        }
        pts.extend([spec.next_value as f32 * 2.0, spec.next_value as f32 * 1.01]);
        let neg: Vec<f32> = pts.iter().map(|p| -p).collect();
        pts.extend(neg);
        pts
    }

    #[test]
    fn all_finite_patterns_round_trip() {
        for (name, spec) in &SPECS {
            for b in 0..=255u8 {
                let v = (spec.decode)(b);
                if v.is_nan() {
                    assert!((spec.decode)((spec.encode)(v)).is_nan(), "{name} {b:#x}");
                } else {
                    assert_eq!((spec.encode)(v), b, "{name} {b:#x} = {v}");
                }
            }
        }
        for b in 0..=255u8 {
            let v = F8E8M0::from_bits(b).to_f32();
            let back = F8E8M0::from_f32(v).to_bits();
            if v.is_nan() {
                assert_eq!(back, 0xFF);
            } else {
                assert_eq!(back, b, "e8m0 {b:#x} = {v}");
            }
        }
    }

    #[test]
    fn encoding_matches_brute_force_at_every_midpoint() {
        for (name, spec) in &SPECS {
            for x in probe_points(spec) {
                assert_eq!(
                    (spec.encode)(x),
                    reference_encode(spec, x),
                    "{name} from_f32({x:e})"
                );
            }
        }
    }

    fn e8m0_reference(x: f32) -> u8 {
        if x.is_nan() || (x < 0.0) {
            return 0xFF;
        }
        let mag = f64::from(x);
        let mut best = 0u8;
        for c in 1..=0xFEu8 {
            let (d, bd) = (
                (2f64.powi(i32::from(c) - 127) - mag).abs(),
                (2f64.powi(i32::from(best) - 127) - mag).abs(),
            );
            if d < bd || (d == bd && c % 2 == 0) {
                best = c;
            }
        }
        best
    }

    #[test]
    fn e8m0_matches_brute_force_at_every_midpoint() {
        for c in 0..0xFEu8 {
            let lo = f64::from(F8E8M0::from_bits(c).to_f32());
            let mid = (lo * 1.5) as f32;
            for x in [
                lo as f32,
                mid,
                mid.next_up(),
                mid.next_down(),
                (lo * 0.75) as f32,
            ] {
                assert_eq!(F8E8M0::from_f32(x).to_bits(), e8m0_reference(x), "{x:e}");
            }
        }
    }

    proptest! {
        #[test]
        fn encoding_matches_brute_force(bits in any::<u32>()) {
            let x = f32::from_bits(bits);
            for (name, spec) in &SPECS {
                let got = (spec.encode)(x);
                if x.is_nan() {
                    prop_assert!((spec.decode)(got).is_nan(), "{}", name);
                } else {
                    prop_assert_eq!(got, reference_encode(spec, x), "{} {:e}", name, x);
                }
            }
            prop_assert_eq!(F8E8M0::from_f32(x).to_bits(), e8m0_reference(x));
        }
    }
}
