//! A link's operation and the kinds of its operands as one code, for the
//! block loop's dispatch.
//!
//! A block dispatches on every link. Matched as a `LinkOp` and then as a
//! pair of `Arg`s, that dispatch took some thirty instructions and three
//! branches per link, against eight vector operations of work on an AVX2
//! block: most of a light link's time there (`chain_costs`). The code picks
//! the arm in one indexed jump. It is computed when an operand is set
//! ([`Link::set`]), not per block or per run: a run is one row, and a row
//! of 1024 f32 is only four zmm blocks. Codes cover the arms chains run (the
//! previous value with a constant, a tile operand or itself, two operands
//! from a tile or constants, a unary op of the previous value), and `Other`
//! sends the rest to the general arms. Only the ymm chains dispatch on
//! the codes (`CODES` in `chain_lanes!`): the zmm ones were slower with
//! them.

use super::{Arg, Link, LinkOp};

/// An operation with the kinds of its operands: `Prev` the previous link's
/// value, `One` a constant, `At` a tile operand; the unary codes take the
/// previous value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Code {
    AddPrevOne,
    AddOnePrev,
    AddPrevAt,
    AddAtPrev,
    AddPrevPrev,
    AddAtOne,
    AddOneAt,
    AddAtAt,
    SubPrevOne,
    SubOnePrev,
    SubPrevAt,
    SubAtPrev,
    SubPrevPrev,
    SubAtOne,
    SubOneAt,
    SubAtAt,
    MulPrevOne,
    MulOnePrev,
    MulPrevAt,
    MulAtPrev,
    MulPrevPrev,
    MulAtOne,
    MulOneAt,
    MulAtAt,
    DivPrevOne,
    DivOnePrev,
    DivPrevAt,
    DivAtPrev,
    DivPrevPrev,
    DivAtOne,
    DivOneAt,
    DivAtAt,
    Neg,
    Abs,
    Sqrt,
    Rsqrt,
    Exp,
    Tanh,
    /// Any other link: the general arms, from the link itself.
    Other,
    /// A link with an operand of one value per row (`Arg::Rows`), on any
    /// vector width: the general arms, in the copy of the block loop for
    /// chains that read rows.
    PerRow,
}

/// The codes of a binary operation, by operand kinds: (Prev, One), (One,
/// Prev), (Prev, At), (At, Prev), (Prev, Prev), (At, One), (One, At), (At,
/// At).
fn binary_codes(op: LinkOp) -> Option<[Code; 8]> {
    use Code::*;
    Some(match op {
        LinkOp::Add => [AddPrevOne, AddOnePrev, AddPrevAt, AddAtPrev, AddPrevPrev, AddAtOne, AddOneAt, AddAtAt],
        LinkOp::Sub => [SubPrevOne, SubOnePrev, SubPrevAt, SubAtPrev, SubPrevPrev, SubAtOne, SubOneAt, SubAtAt],
        LinkOp::Mul => [MulPrevOne, MulOnePrev, MulPrevAt, MulAtPrev, MulPrevPrev, MulAtOne, MulOneAt, MulAtAt],
        LinkOp::Div => [DivPrevOne, DivOnePrev, DivPrevAt, DivAtPrev, DivPrevPrev, DivAtOne, DivOneAt, DivAtAt],
        _ => return None,
    })
}

fn unary_code(op: LinkOp) -> Option<Code> {
    Some(match op {
        LinkOp::Neg => Code::Neg,
        LinkOp::Abs => Code::Abs,
        LinkOp::Sqrt => Code::Sqrt,
        LinkOp::Rsqrt => Code::Rsqrt,
        LinkOp::Exp => Code::Exp,
        LinkOp::Tanh => Code::Tanh,
        _ => return None,
    })
}

impl Code {
    /// The code of `op` on operands `a`, `b` and `c`.
    pub(super) fn of<T>(op: LinkOp, a: &Arg<T>, b: &Arg<T>, c: &Arg<T>) -> Code {
        if [a, b, c].iter().any(|x| matches!(x, Arg::Rows(..))) {
            return Code::PerRow;
        }
        if let Some([prev_one, one_prev, prev_at, at_prev, prev_prev, at_one, one_at, at_at]) = binary_codes(op) {
            return match (a, b) {
                (Arg::Prev, Arg::One(_)) => prev_one,
                (Arg::One(_), Arg::Prev) => one_prev,
                (Arg::Prev, Arg::At(_)) => prev_at,
                (Arg::At(_), Arg::Prev) => at_prev,
                (Arg::Prev, Arg::Prev) => prev_prev,
                (Arg::At(_), Arg::One(_)) => at_one,
                (Arg::One(_), Arg::At(_)) => one_at,
                (Arg::At(_), Arg::At(_)) => at_at,
                // Two constants: computed once a tile, never a link.
                (Arg::One(_), Arg::One(_)) => Code::Other,
                (Arg::Rows(..), _) | (_, Arg::Rows(..)) => Code::PerRow,
            };
        }
        match (unary_code(op), a) {
            (Some(code), Arg::Prev) => code,
            _ => Code::Other,
        }
    }
}

impl<T: Copy + Default> Arg<T> {
    /// The constant of a `One` operand (the codes say which are).
    #[inline(always)]
    pub(super) fn one(self) -> T {
        match self {
            Arg::One(x) => x,
            _ => T::default(),
        }
    }

    /// The pointer of an `At` operand (the codes say which are).
    #[inline(always)]
    pub(super) fn at(self) -> *const T {
        match self {
            Arg::At(p) => p,
            _ => std::ptr::null(),
        }
    }
}

impl<T> Link<T> {
    /// `op(a, b)` (`c` for Select), stored nowhere until the caller sets
    /// `store`.
    pub(in crate::fusion) fn new(op: LinkOp, [a, b, c]: [Arg<T>; 3]) -> Self {
        Link { op, code: Code::of(op, &a, &b, &c), a, b, c, store: std::ptr::null_mut(), stream: false }
    }

    /// Sets operand `k` (0 `a`, 1 `b`, else `c`), and the code with it.
    #[inline]
    pub(in crate::fusion) fn set(&mut self, k: usize, arg: Arg<T>) {
        match k {
            0 => self.a = arg,
            1 => self.b = arg,
            _ => self.c = arg,
        }
        self.code = Code::of(self.op, &self.a, &self.b, &self.c);
    }

    /// Sets operand `k` to the constant `x`. A row's value replaces the
    /// row before's, a constant already, so the code stays: recomputed for
    /// every row, it cost LayerNorm + GELU over f32[4096,256] (a row is one
    /// zmm block) about 4%.
    #[inline]
    pub(in crate::fusion) fn set_one(&mut self, k: usize, x: T) {
        let arg = match k {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        match arg {
            Arg::One(y) => *y = x,
            _ => self.set(k, Arg::One(x)),
        }
    }

    #[inline(always)]
    pub(super) fn code(&self) -> Code {
        self.code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(op: LinkOp, a: Arg<f32>, b: Arg<f32>) -> Link<f32> {
        Link::new(op, [a, b, Arg::One(0.0)])
    }

    #[test]
    fn codes_follow_the_operands() {
        let x = [1.0f32; 4];
        let (p, q) = (x.as_ptr(), x[1..].as_ptr());
        assert_eq!(link(LinkOp::Sub, Arg::One(2.5), Arg::Prev).code(), Code::SubOnePrev);
        assert_eq!(link(LinkOp::Div, Arg::Prev, Arg::At(p)).code(), Code::DivPrevAt);
        assert_eq!(link(LinkOp::Mul, Arg::At(p), Arg::Prev).code(), Code::MulAtPrev);
        assert_eq!(link(LinkOp::Mul, Arg::Prev, Arg::Prev).code(), Code::MulPrevPrev);
        assert_eq!(link(LinkOp::Sub, Arg::At(p), Arg::One(0.5)).code(), Code::SubAtOne);
        assert_eq!(link(LinkOp::Add, Arg::At(p), Arg::At(q)).code(), Code::AddAtAt);
        assert_eq!(link(LinkOp::Tanh, Arg::Prev, Arg::One(0.0)).code(), Code::Tanh);
        // The general arms: a unary op of a tile operand, comparisons and
        // Select.
        for l in [
            link(LinkOp::Tanh, Arg::At(p), Arg::One(0.0)),
            link(LinkOp::Compare(xlaref_reference::ir::Direction::Lt), Arg::Prev, Arg::One(0.0)),
            link(LinkOp::Select, Arg::Prev, Arg::One(1.0)),
        ] {
            assert_eq!(l.code(), Code::Other);
        }
        // Setting an operand sets the code: a tile's operand placed after
        // planning, a row's constant.
        let mut l = link(LinkOp::Sub, Arg::At(p), Arg::One(0.0));
        l.set(1, Arg::At(q));
        assert_eq!((l.code(), l.b.at()), (Code::SubAtAt, q));
        l.set(0, Arg::Prev);
        l.set(1, Arg::One(3.0));
        assert_eq!((l.code(), l.b.one()), (Code::SubPrevOne, 3.0));
        l.set_one(1, 4.0);
        assert_eq!((l.code(), l.b.one()), (Code::SubPrevOne, 4.0));
        l.set_one(0, 5.0);
        assert_eq!((l.code(), l.a.one()), (Code::Other, 5.0));
        // A value per row in any operand, Select's third included, runs
        // out of line until it is replaced.
        l.set(1, Arg::Rows(p, 16));
        assert_eq!(l.code(), Code::PerRow);
        l.set(1, Arg::Prev);
        l.set(0, Arg::At(p));
        assert_eq!(l.code(), Code::SubAtPrev);
        let mut select = link(LinkOp::Select, Arg::Prev, Arg::At(q));
        select.set(2, Arg::Rows(p, 32));
        assert_eq!(select.code(), Code::PerRow);
    }
}
