//! Which instruction sets the engine's own kernels use: the widest the CPU
//! has, capped by the `XLAREF_FAST_ISA` environment variable.
//!
//! The cap exists so that one machine can run every code path: on an
//! AVX-512 host, `XLAREF_FAST_ISA=avx2` or `=portable` runs the kernels a
//! smaller CPU would run, and CI checks all of them against the reference.
//! The `gemm` crate (f32/f64 Dot and Conv) dispatches on its own and is not
//! capped.

use std::sync::OnceLock;

/// The environment variable that caps [`Isa`].
pub const CAP_VARIABLE: &str = "XLAREF_FAST_ISA";

/// Instruction-set levels, each including the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// Plain Rust, compiled for the build's baseline target.
    Portable,
    /// AVX2, FMA, BMI2 and POPCNT.
    Avx2,
    /// AVX-512 F, BW, VL and DQ (and AVX2's level).
    Avx512,
    /// AVX-512 with VBMI (byte permutes).
    Avx512Vbmi,
}

impl Isa {
    /// Every level, narrowest first, under the names the cap accepts.
    pub const ALL: [(Isa, &'static str); 4] =
        [(Isa::Portable, "portable"), (Isa::Avx2, "avx2"), (Isa::Avx512, "avx512"), (Isa::Avx512Vbmi, "avx512vbmi")];

    /// The level named `name` (one of [`Isa::ALL`]'s names).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.iter().find(|(_, n)| *n == name).map(|&(isa, _)| isa)
    }

    pub fn name(self) -> &'static str {
        Isa::ALL.iter().find(|(isa, _)| *isa == self).map_or("portable", |(_, n)| n)
    }
}

/// The widest level the CPU supports.
pub fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        // Each level includes the one before: the kernels compiled for
        // AVX-512 also use AVX2's instructions.
        let avx2 = has!("avx2") && has!("fma") && has!("bmi2") && has!("popcnt");
        let avx512 = avx2 && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq");
        if avx512 && has!("avx512vbmi") {
            return Isa::Avx512Vbmi;
        }
        if avx512 {
            return Isa::Avx512;
        }
        if avx2 {
            return Isa::Avx2;
        }
    }
    Isa::Portable
}

/// The cap named by `XLAREF_FAST_ISA`: `Ok(None)` when it is unset or
/// empty, an error naming the accepted values when it names no level.
pub fn cap_from_env() -> Result<Option<Isa>, String> {
    match std::env::var(CAP_VARIABLE) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        // `XLAREF_FAST_ISA= cmd`, the shell's way to unset it for one command.
        Ok(name) if name.trim().is_empty() => Ok(None),
        Ok(name) => Isa::from_name(name.trim()).map(Some).ok_or_else(|| invalid_cap(&name)),
        Err(std::env::VarError::NotUnicode(_)) => Err(invalid_cap("(not UTF-8)")),
    }
}

fn invalid_cap(value: &str) -> String {
    let names: Vec<&str> = Isa::ALL.iter().map(|(_, n)| *n).collect();
    format!("{CAP_VARIABLE}={value:?} names no instruction set; expected one of {}", names.join(", "))
}

/// The level the kernels use: [`detected`], capped by `XLAREF_FAST_ISA`
/// (an invalid cap is ignored here; the CLI rejects it up front). Read
/// once per process.
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        let detected = detected();
        match cap_from_env() {
            Ok(Some(cap)) => cap.min(detected),
            _ => detected,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_are_ordered() {
        for (isa, name) in Isa::ALL {
            assert_eq!(Isa::from_name(name), Some(isa));
            assert_eq!(isa.name(), name);
        }
        assert_eq!(Isa::from_name("sse2"), None);
        assert!(Isa::Portable < Isa::Avx2 && Isa::Avx2 < Isa::Avx512 && Isa::Avx512 < Isa::Avx512Vbmi);
        assert!(isa() <= detected());
    }
}
